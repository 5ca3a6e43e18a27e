#!/usr/bin/env python3
"""Opens the `capturekit report` of a dataset in a real browser (headless Chromium, Debian's
`chromium`, installed by scripts/bootstrap) and checks what a user would see:

- the page logs nothing to the console: no script error, no blocked fetch (the report's CSP
  turns any network access into a console message), no warning (Chromium's console lines are
  read from --enable-logging=stderr);
- no error reached window.onerror (the report records them in <html data-ck-errors>) and the
  load event ran (data-ck-loaded);
- the camera path, the box and the coverage dial are in the rendered DOM, non-empty, and laid
  out with a non-zero size (data-ck-rendered, measured by the page after load); so are the
  surface coverage map's two views, with the "capture next" line (unless the page says there
  is no surface map);
- a screenshot is taken, and is not blank: it shows the path's blue and the box's orange.
First a self-test shows the checks can fail (broken DOMs are caught; this Chromium puts a
console message and a blocked fetch on stderr).

Usage: check_report_browser.py DATASET [--screenshot out.png] [--docs docs/report.png]
Exit status 0 when every check passes; 1 with one line per failure otherwise. Runs as root
(--no-sandbox) and stops Chromium after --timeout seconds.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from html.parser import HTMLParser


def chromium_binary():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def run_browser(binary, args, timeout):
    """(returncode, stdout, stderr) of one headless Chromium run; the whole process group is
    killed after `timeout` seconds (and that is a failure)."""
    proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise SystemExit(f"check_report_browser: chromium did not finish within {timeout} s")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


class Dom(HTMLParser):
    """The attributes of elements with an id, the root's attributes, and per id the classes of
    the elements inside it."""

    VOID = {"meta", "img", "br", "link", "input", "hr", "source"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.by_id, self.root, self.stack, self.inside = {}, {}, [], {}

    def handle_starttag(self, tag, attrs, closed=False):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        for _, anc in self.stack:
            if anc:
                self.inside.setdefault(anc, []).append((tag, a))
        if "id" in a:
            self.by_id[a["id"]] = (tag, a)
        if not closed and tag not in self.VOID:
            self.stack.append((tag, a.get("id")))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs, closed=True)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


def rendered_size(attrs):
    m = re.fullmatch(r"(\d+)x(\d+)", attrs.get("data-ck-rendered", ""))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def check_dom(dom_text):
    failures = []
    dom = Dom()
    dom.feed(dom_text)
    if dom.root.get("data-ck-errors"):
        failures.append(f"script errors in the page: {dom.root['data-ck-errors']}")
    if dom.root.get("data-ck-loaded") != "1":
        failures.append("the page's load event did not run (data-ck-loaded missing)")
    want = {"ck-path": ("polyline", 2), "ck-box": ("polygon", 3)}
    for eid, (tag, min_points) in want.items():
        if eid not in dom.by_id:
            failures.append(f"#{eid} is missing from the rendered DOM")
            continue
        t, a = dom.by_id[eid]
        n = len(a.get("points", "").split())
        if t != tag or n < min_points:
            failures.append(f"#{eid} is a <{t}> with {n} points (want a <{tag}> with >= {min_points})")
        w, h = rendered_size(a)
        if w <= 0 or h <= 0:
            failures.append(f"#{eid} has no rendered size (data-ck-rendered={a.get('data-ck-rendered')!r})")
    if "ck-dial" not in dom.by_id:
        failures.append("#ck-dial is missing from the rendered DOM")
    else:
        cells = [a for t, a in dom.inside.get("ck-dial", []) if t == "path" and "ck-dial-cell" in a.get("class", "")]
        if not cells or not any(int(a.get("data-count", "0")) > 0 for a in cells):
            failures.append(f"#ck-dial has {len(cells)} cells and none with a view")
        w, h = rendered_size(dom.by_id["ck-dial"][1])
        if w <= 0 or h <= 0:
            failures.append("#ck-dial has no rendered size")
    # The surface coverage map (unless the page says there is none): both views drawn, and the
    # "capture next" line.
    if "ck-surface-note" not in dom.by_id:
        for eid in ("ck-surface-top", "ck-surface-side"):
            if eid not in dom.by_id:
                failures.append(f"#{eid} is missing from the rendered DOM")
                continue
            w, h = rendered_size(dom.by_id[eid][1])
            if w <= 0 or h <= 0:
                failures.append(f"#{eid} has no rendered size (data-ck-rendered={dom.by_id[eid][1].get('data-ck-rendered')!r})")
        if "ck-capture-next" not in dom.by_id:
            failures.append("#ck-capture-next is missing from the rendered DOM")
    return failures


def check_screenshot(path):
    from PIL import Image  # a test dependency (scripts/bootstrap)
    failures = []
    with Image.open(path) as im:
        rgb = im.convert("RGB")
        w, h = rgb.size
        colours = rgb.getcolors(maxcolors=1 << 20) or []
    if w < 400 or h < 400:
        failures.append(f"screenshot is {w}x{h}")
    if len(colours) < 50:
        failures.append(f"screenshot has {len(colours)} colours: blank?")

    def near(target, tol=40):
        return sum(n for n, c in colours if all(abs(a - b) <= tol for a, b in zip(c, target)))

    if near((37, 99, 235)) < 50:
        failures.append("screenshot shows no camera path (#2563eb)")
    if near((234, 88, 12)) < 50:
        failures.append("screenshot shows no box outline (#ea580c)")
    return failures


_GOOD = ('<html data-ck-loaded="1"><body><svg><polyline id="ck-path" points="0,0 1,1" data-ck-rendered="9x9"/>'
         '<polygon id="ck-box" points="0,0 1,0 1,1" data-ck-rendered="9x9"></polygon></svg>'
         '<svg id="ck-dial" data-ck-rendered="9x9"><path class="ck-dial-cell" data-count="2"><title>t</title></path>'
         '</svg><img id="ck-surface-top" data-ck-rendered="9x9"><img id="ck-surface-side" data-ck-rendered="9x9">'
         '<p id="ck-capture-next">capture next: the back</p></body></html>')
_BAD_PAGE = ('<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
             'script-src \'unsafe-inline\'"></head><body><img src="https://example.invalid/x.png">'
             '<script>console.error("self-test")</script></body></html>')


def self_test(binary, timeout):
    """The checks must be able to fail: each broken variant is caught, the good one passes, and
    this Chromium reports console messages and a blocked fetch on stderr."""
    problems = []
    if check_dom(_GOOD):
        problems.append(f"a good DOM fails: {check_dom(_GOOD)}")
    for broken in (_GOOD.replace('id="ck-path"', 'id="x"'), _GOOD.replace('points="0,0 1,0 1,1"', 'points=""'),
                   _GOOD.replace('data-count="2"', 'data-count="0"'), _GOOD.replace('9x9"/>', '0x0"/>', 1),
                   _GOOD.replace('data-ck-loaded="1"', 'data-ck-errors="boom"'), _GOOD.replace(' id="ck-dial"', ""),
                   _GOOD.replace(' id="ck-surface-side" data-ck-rendered="9x9"', ' id="ck-surface-side" data-ck-rendered="0x0"'),
                   _GOOD.replace(' id="ck-capture-next"', "")):
        if not check_dom(broken):
            problems.append(f"a broken DOM passes: {broken}")
    with tempfile.TemporaryDirectory(prefix="ck-report-self-") as tmp:
        page = os.path.join(tmp, "bad.html")
        with open(page, "w") as f:
            f.write(_BAD_PAGE)
        _, _, err = run_browser(binary, ["--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp}/p",
                                         "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + page], timeout)
        console = [line for line in err.splitlines() if ":CONSOLE" in line]
        if not any("self-test" in line for line in console) or not any("example.invalid" in line for line in console):
            problems.append(f"chromium's console lines were not seen on stderr: {console}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--screenshot", help="where to keep the screenshot (default: a temporary file)")
    p.add_argument("--docs", help="also write a small palette copy of the screenshot here (docs/report.png)")
    p.add_argument("--timeout", type=float, default=90.0)
    p.add_argument("--window", default="1000,1700", help="browser window size W,H")
    args = p.parse_args()
    binary = chromium_binary()
    if binary is None:
        print("check_report_browser: chromium is not installed (scripts/bootstrap installs Debian's `chromium`)", file=sys.stderr)
        return 1
    problems = self_test(binary, args.timeout)
    if problems:
        for f in problems:
            print(f"check_report_browser: self-test: {f}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="ck-report-") as tmp:
        report = os.path.join(tmp, "report.html")
        r = subprocess.run([sys.executable, "-m", "capturekit", "report", args.dataset, "-o", report],
                           capture_output=True, text=True, timeout=args.timeout)
        if r.returncode != 0:
            print(f"check_report_browser: capturekit report failed: {r.stderr.strip()}", file=sys.stderr)
            return 1
        url = "file://" + os.path.abspath(report)
        common = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                  "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--hide-scrollbars", f"--window-size={args.window}",
                  "--virtual-time-budget=3000", "--enable-logging=stderr", "--v=0"]
        failures = []
        code, dom_text, err = run_browser(binary, common + [f"--user-data-dir={tmp}/profile-dom", "--dump-dom", url],
                                          args.timeout)
        if code != 0:
            failures.append(f"chromium --dump-dom exited with {code}")
        console = [line for line in err.splitlines() if ":CONSOLE" in line]
        failures += [f"console: {line}" for line in console]
        failures += check_dom(dom_text)
        shot = args.screenshot or os.path.join(tmp, "report.png")
        code, _, err = run_browser(binary, common + [f"--user-data-dir={tmp}/profile-shot", f"--screenshot={shot}", url],
                                   args.timeout)
        failures += [f"console (screenshot run): {line}" for line in err.splitlines() if ":CONSOLE" in line]
        if code != 0 or not os.path.isfile(shot):
            failures.append(f"chromium --screenshot exited with {code} and wrote no {shot}")
        else:
            failures += check_screenshot(shot)
            if args.docs:
                from PIL import Image
                with Image.open(shot) as im:
                    im.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(args.docs, optimize=True)
    if failures:
        for f in failures:
            print(f"check_report_browser: {f}", file=sys.stderr)
        return 1
    print(f"report in headless Chromium ({os.path.basename(binary)}): no console output, path, box and dial rendered,"
          f" screenshot checked{' -> ' + args.screenshot if args.screenshot else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
