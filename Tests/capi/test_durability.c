/*
 * test_durability.c — one writer per dataset across processes (issue 19): a forked child holds a
 * dataset open for writing; the parent's writable opens are CK_E_BUSY naming the folder and the
 * child's pid and change nothing, read-only opens work; after SIGKILL of the child the parent's
 * open succeeds (the kernel dropped the flock: no stale lock). A create into a folder whose lock
 * another handle holds (here: this process's own flock on .capturekit.lock, as a racing create
 * holds it before its folders exist) is CK_E_BUSY too, for ck_dataset_create and ck_session_create.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

/* The dataset folder the tests share: <tmp>/ds. */
static char g_ds[128];

static void test_cross_process_lock(void)
{
    ck_dataset *ds = NULL;
    ck_session *s = NULL;
    ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    ck_session_options so;
    int ready[2];
    char byte = 0, pid_text[32];
    pid_t child;

    o.start_time_unix = 1700000000.0;
    o.write_mode = CK_WRITE_MODE_SYNC;
    CHECK_STATUS(ck_dataset_create(&ds, g_ds, &o), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    CHECK(pipe(ready) == 0);
    child = fork();
    if (child == 0) {
        ck_dataset *held = NULL;
        close(ready[0]);
        if (ck_dataset_open(&held, g_ds) != CK_OK) _exit(2);
        if (write(ready[1], "r", 1) != 1) _exit(3);
        for (;;) pause();  /* holds the dataset until killed */
    }
    close(ready[1]);
    CHECK(read(ready[0], &byte, 1) == 1 && byte == 'r');
    snprintf(pid_text, sizeof pid_text, "process %d", (int)child);

    ds = NULL;
    CHECK_STATUS(ck_dataset_open(&ds, g_ds), CK_E_BUSY);
    CHECK(ds == NULL);
    CHECK(strstr(ck_last_error_message(), g_ds) != NULL && strstr(ck_last_error_message(), pid_text) != NULL);
    CHECK_STATUS(ck_session_options_init(&so, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    so.stream_depth = 0;
    CHECK_STATUS(ck_session_resume(&s, g_ds, &so), CK_E_BUSY);
    CHECK(strstr(ck_last_error_message(), pid_text) != NULL);
    CHECK_STATUS(ck_dataset_open_readonly(&ds, g_ds), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    CHECK(strcmp(ck_status_string(CK_E_BUSY), "CK_E_BUSY: in use by another writer") == 0);

    /* SIGKILL: no chance to unlock; the kernel drops the flock with the process. */
    CHECK(kill(child, SIGKILL) == 0);
    CHECK(waitpid(child, NULL, 0) == child);
    ds = NULL;
    CHECK_STATUS(ck_dataset_open(&ds, g_ds), CK_OK);
    /* The same process, a second handle: flock conflicts across open file descriptions too. */
    {
        ck_dataset *second = NULL;
        CHECK_STATUS(ck_dataset_open(&second, g_ds), CK_E_BUSY);
        CHECK(second == NULL);
        CHECK_STATUS(ck_dataset_create(&second, g_ds, &o), CK_E_EXISTS);
    }
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    CHECK_STATUS(ck_session_resume(&s, g_ds, &so), CK_OK);
    CHECK_STATUS(ck_session_close(s), CK_OK);
    close(ready[0]);
}

static void test_create_busy(void)
{
    char dir[300], lock[340];
    ck_dataset *ds = NULL;
    ck_session *s = NULL;
    ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    ck_session_options so;
    int fd;

    snprintf(dir, sizeof dir, "%s-create", g_ds);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(lock, sizeof lock, "%s/.capturekit.lock", dir);
    fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0);
    o.start_time_unix = 1700000000.0;
    CHECK_STATUS(ck_dataset_create(&ds, dir, &o), CK_E_BUSY);
    CHECK(ds == NULL);
    CHECK(strstr(ck_last_error_message(), dir) != NULL);
    CHECK_STATUS(ck_session_options_init(&so, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    so.dataset = &o;
    CHECK_STATUS(ck_session_create(&s, dir, &so, NULL), CK_E_BUSY);
    CHECK(s == NULL);
    close(fd);  /* the lock is free: the same folder (holding only the lock file) is created */
    CHECK_STATUS(ck_dataset_create(&ds, dir, &o), CK_OK);
    CHECK_STATUS(ck_dataset_cancel(ds), CK_OK);
}

int main(void)
{
    if (tmp_dir_create("ck-durability") != 0) return 1;
    snprintf(g_ds, sizeof g_ds, "%s", tmp_path("ds"));
    test_cross_process_lock();
    test_create_busy();
    if (g_failed == 0) remove_tree(g_dir);
    else fprintf(stderr, "note: files kept in %s\n", g_dir);
    return CHECK_SUMMARY();
}
