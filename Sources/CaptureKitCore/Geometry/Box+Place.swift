// Tap to place: a pixel the operator tapped becomes the box's position on its floor.

extension Box {
    /// Casts the ray through pixel (u, v) onto the box's floor and stands the box there (centre
    /// above the hit point; size and yaw kept). Returns the floor hit, or nil (box unchanged) when
    /// the ray misses the floor or meets it beyond `Geometry.maxCoordinate` (a tap just below the
    /// horizon).
    /// - Throws: `state` when the box has no floor; `invalidArgument` for a bad pixel.
    public mutating func place(atPixelU u: Float, v: Float, pose: Pose, intrinsics: Intrinsics) throws(CaptureKitError) -> Hit? {
        guard let floor else { throw .state("the box has no floor; set one with ck_box_set_floor first") }
        let ray = try Ray(pixelU: u, v: v, pose: pose, intrinsics: intrinsics)
        guard let hit = try ray.intersect(floorY: floor),
              abs(hit.point.x) <= Geometry.maxCoordinate, abs(hit.point.z) <= Geometry.maxCoordinate else {
            return nil
        }
        try placeOnFloor(x: hit.point.x, z: hit.point.z)
        return hit
    }
}
