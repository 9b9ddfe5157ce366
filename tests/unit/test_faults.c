/*
 * test_faults.c - memory running out, and the device failing, in the
 * middle of the operations.
 *
 * Two kinds of fault, each armed at the n-th event of its kind from now,
 * for that one event or for every one from it on:
 *
 * - an allocation: the library's malloc, calloc and realloc are wrapped
 *   (the link's --wrap) and return NULL;
 * - a write or barrier of the device, which the file system reaches
 *   through a wrapping device that returns -EIO.
 *
 * A fixed workload runs with the fault armed; its operations may fail
 * (their errors are expected and ignored).  Then:
 *
 * - memory comes back, or the device recovers: sync and close must write
 *   everything, and a full check must find nothing worse than leaks (an
 *   operation cut short may leave an inode or block allocated that
 *   nothing names).  When the engine lost track of an ordering (sync says
 *   -ENOMEM), the image must say that it needs a full check.
 * - or the device stays dead, or the program crashes: what reached the
 *   disk must hold nothing worse than leaks, unless the image says that
 *   it needs a full check (and the check repairs it); once an ordering is
 *   lost, the next write must leave the image saying so.
 *
 * make check tries every event of the workload's first 64 and then every
 * 7th; SUFS_FAULTS_ALL=1 tries every one (a run of minutes).
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"
#include "engine/deps_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fault { ALLOC, IO };

static enum fault armed;        /* the kind of event that fails */
static long countdown = -1;     /* events of that kind before it fails; -1: off */
static int persistent;          /* once failing, every later one fails too */
static unsigned long events[2], failures;

static int fail_now(enum fault kind)
{
	events[kind]++;
	if (countdown < 0 || kind != armed)
		return 0;
	if (countdown > 0) {
		countdown--;
		return 0;
	}
	failures++;
	if (!persistent)
		countdown = -1;
	return 1;
}

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

void *__wrap_malloc(size_t size)
{
	return fail_now(ALLOC) ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now(ALLOC) ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fail_now(ALLOC) ? NULL : __real_realloc(p, size);
}

static int reads_fail;          /* every read fails while set */

/* The device the file system sees: the image file's, whose writes and
 * barriers fail when armed, and its reads while reads_fail is set. */
static int fdev_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	return reads_fail ? -EIO : sufs_dev_read(dev->priv, off, buf, len);
}

static int fdev_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	return fail_now(IO) ? -EIO : sufs_dev_write(dev->priv, off, buf, len);
}

static int fdev_barrier(struct sufs_dev *dev)
{
	return fail_now(IO) ? -EIO : sufs_dev_barrier(dev->priv);
}

static void fdev_close(struct sufs_dev *dev)
{
	sufs_dev_close(dev->priv);
}

static const struct sufs_dev_ops fdev_ops = {
	.read = fdev_read,
	.write = fdev_write,
	.barrier = fdev_barrier,
	.close = fdev_close,
};

static const struct sufs_cred user = { 1000, 100 };

#define NAME(s) s, strlen(s)

/*
 * Every kind of operation, with write-back in the middle (a cache of 64
 * blocks): names made, written (through the double indirect blocks),
 * linked, renamed across directories, removed early and late, truncated,
 * fsync'd.  Every result is ignored: after a failure the later steps may
 * find nothing to work on.
 */
static void workload(struct sufs_fs *fs)
{
	static uint8_t buf[8192];
	uint32_t d = 0, e = 0, x = 0, big = 0, ino;
	char name[32];
	int i;

	tu_pattern_fill(buf, sizeof(buf), 7, 0);
	sufs_mkdir(fs, SUFS_ROOT_INO, NAME("d"), 0755, &user, &d);
	sufs_mkdir(fs, SUFS_ROOT_INO, NAME("e"), 0755, &user, &e);
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "file-%02d", i);
		ino = 0;
		if (sufs_create(fs, d, NAME(name), 0644, &user, &ino) == 0)
			sufs_write(fs, ino, 0, buf, 100 + (size_t)i * 173);
	}
	sufs_create(fs, e, NAME("big"), 0644, &user, &big);
	sufs_write(fs, big, 0, buf, sizeof(buf));
	sufs_write(fs, big, 300 * 1024, buf, sizeof(buf)); /* double indirect */
	sufs_symlink(fs, e, NAME("link"), "../d/file-01", &user, &ino);
	sufs_mkdir(fs, e, NAME("x"), 0755, &user, &x);
	sufs_rename(fs, d, NAME("file-01"), e, NAME("moved"));
	ino = 0;
	if (sufs_create(fs, d, NAME("file-linked"), 0644, &user, &ino) == 0)
		sufs_link(fs, ino, e, NAME("second-name"));
	for (i = 2; i < 40; i += 3) {
		snprintf(name, sizeof(name), "file-%02d", i);
		sufs_unlink(fs, d, NAME(name));
	}
	sufs_fsync(fs, big);
	sufs_truncate(fs, big, 1000);
	sufs_rename(fs, d, NAME("file-03"), e, NAME("moved")); /* over a file */
	sufs_rename(fs, e, NAME("x"), d, NAME("x"));            /* a directory */
	sufs_rmdir(fs, d, NAME("x"));
	sufs_sync(fs);
	for (i = 4; i < 40; i += 3) {
		snprintf(name, sizeof(name), "file-%02d", i);
		sufs_unlink(fs, d, NAME(name));
	}
	sufs_unlink(fs, e, NAME("second-name"));
}

/* The image of t, closed, opened again for writing through the failing
 * device (with nothing in its cache). */
static void fresh_reopen(struct tfs *t)
{
	struct sufs_dev *inner, *dev;

	assert_int_equal(sufs_dev_open(t->path, SUFS_DEV_RDWR, &inner), 0);
	dev = calloc(1, sizeof(*dev));
	assert_non_null(dev);
	dev->ops = &fdev_ops;
	dev->priv = inner;
	dev->size = inner->size;
	dev->writable = 1;
	assert_int_equal(sufs_open_dev(dev, SUFS_OPEN_RDWR, 0, &t->fs), 0);
}

/* A fresh small image (1 KiB blocks), open for writing in mode through
 * the failing device. */
static void fresh(struct tfs *t, unsigned mode)
{
	struct sufs_mkfs_opts o;

	tu_default_opts(&o, 1024);
	o.inodes = 256;
	tu_make_opts(t, 4 << 20, &o);
	tu_close(t);
	fresh_reopen(t);
	sufs_set_clock(t->fs, TU_TIME_SEC + 1000, 0);
	assert_int_equal(sufs_set_mode(t->fs, mode), 0);
	sufs_set_cache_size(t->fs, 64 * 1024);
}

/* Is the image flagged as needing a full check? */
static int flagged(const char *path)
{
	struct sufs_fs *fs;
	int f;

	assert_int_equal(sufs_open(path, 0, &fs), 0);
	f = (sufs_get_super(fs)->flags & SUFS_FLAG_NEEDS_FSCK) != 0;
	sufs_close(fs);
	return f;
}

/* A full check; fails the test when it finds worse than leaks. */
static void only_leaks(const char *path, const char *what)
{
	struct sufs_check_opts o = { .flags = SUFS_CHECK_NO | SUFS_CHECK_FORCE };
	struct sufs_check_result r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(sufs_check(path, &o, &r), 0);
	if (r.nonleaks != 0)
		fail_msg("%s: the check found %u problems worse than leaks", what, r.nonleaks);
}

/* A repair, and then a check that finds nothing. */
static void repaired(const char *path)
{
	struct sufs_check_opts o = { .flags = SUFS_CHECK_YES | SUFS_CHECK_FORCE };
	struct sufs_check_result r;

	assert_int_equal(sufs_check(path, &o, &r), 0);
	assert_int_equal(r.status & SUFS_EXIT_UNCORRECTED, 0);
	o.flags = SUFS_CHECK_NO | SUFS_CHECK_FORCE;
	assert_int_equal(sufs_check(path, &o, &r), 0);
	assert_int_equal(r.problems, 0);
}

static const char *const fault_names[] = { "allocation", "write or barrier" };
static const char *const fault_plurals[] = { "allocations", "writes and barriers" };

/*
 * The workload with the n-th event of kind failing (n < 0: none).  Then,
 * unless crash: the device recovers (or stays dead: an I/O fault that
 * stays), sync and close; else a crash.  Checks the image as the file's
 * comment says.  Returns what sync said (0, -ENOMEM or -EIO; 0 after a
 * crash); events[kind] is left as the workload's count.
 */
static int run(enum fault kind, unsigned mode, long n, int stay, int crash)
{
	struct tfs t = { 0 };
	unsigned long made;
	int sync_err = 0, close_err, dead = kind == IO && stay;
	char what[64];

	snprintf(what, sizeof(what), "%s %ld%s", fault_names[kind], n,
		 stay ? " and all after" : "");
	fresh(&t, mode);
	events[ALLOC] = events[IO] = failures = 0;
	armed = kind;
	persistent = stay;
	countdown = n;
	workload(t.fs);
	made = events[kind];
	if (!dead)
		countdown = -1;
	if (crash) {
		int written = 0;

		if (t.fs->deps->failed) {
			/* an ordering was lost: once anything more is written,
			 * the image says so */
			written = sufs_deps_flush(t.fs, NULL, NULL);
			assert_true(written >= 0);
		}
		sufs_abandon(t.fs);
		t.fs = NULL;
		assert_true(!written || flagged(t.path));
	} else {
		sync_err = sufs_sync(t.fs);
		close_err = sufs_close(t.fs);
		t.fs = NULL;
		countdown = -1;
		if (dead) {
			/* nothing more reached the disk: a crash */
			assert_true(n >= (long)made || (sync_err == -EIO && close_err == -EIO));
		} else {
			/* all is written, in order or not: close says what sync said */
			if (sync_err != 0 && !(kind == ALLOC && sync_err == -ENOMEM))
				fail_msg("%s: sync: %s", what, sufs_strerror(sync_err));
			assert_int_equal(close_err, sync_err);
			only_leaks(t.path, what);
			/* the ordering was lost: the image says so */
			assert_int_equal(flagged(t.path), sync_err == -ENOMEM);
		}
	}
	if (crash || dead) {
		if (flagged(t.path))
			repaired(t.path);
		else
			only_leaks(t.path, what);
	}
	tu_destroy(&t);
	events[kind] = made;
	return sync_err;
}

static void every_event(enum fault kind, unsigned mode, int stay, int crash)
{
	unsigned long total;
	int all = getenv("SUFS_FAULTS_ALL") != NULL;
	long n, tried = 0, lost = 0;

	assert_int_equal(run(kind, mode, -1, 0, crash), 0);
	total = events[kind];
	assert_int_equal(failures, 0);
	assert_true(total > 10);
	for (n = 0; n < (long)total; n += all || n < 64 ? 1 : 7, tried++) {
		lost += run(kind, mode, n, stay, crash) == -ENOMEM;
		assert_true(failures > 0);
	}
	if (kind == ALLOC && !crash)
		print_message("%lu %s; %ld failed in turn%s, %ld of them losing an ordering\n",
			      total, fault_plurals[kind], tried, stay ? " and all after" : "",
			      lost);
	else
		print_message("%lu %s; %ld failed in turn%s\n", total, fault_plurals[kind],
			      tried, crash ? " before a crash" : stay ? " and all after" : "");
}

/*
 * A file removed before its inode reached the disk has its pending updates
 * forgotten and its blocks freed at once; but not once an epoch failed,
 * whose writes may have reached the disk all the same (an update stays
 * pending, and so looks never written).  fail: make the flush fail.
 */
static uint64_t forgotten_after(int fail)
{
	static uint8_t buf[3000];
	struct tfs t = { 0 };
	uint32_t ino = 0;
	uint64_t forgotten;

	fresh(&t, SUFS_MODE_SOFTDEP);
	assert_int_equal(sufs_create(t.fs, SUFS_ROOT_INO, NAME("f"), 0644, &user, &ino), 0);
	assert_int_equal(sufs_write(t.fs, ino, 0, buf, sizeof(buf)), 0);
	if (fail) {
		armed = IO;
		persistent = 0;
		countdown = 0;
		assert_int_equal(sufs_deps_flush(t.fs, NULL, NULL), -EIO);
		countdown = -1;
	}
	assert_int_equal(sufs_unlink(t.fs, SUFS_ROOT_INO, NAME("f")), 0);
	forgotten = t.fs->deps->forgotten;
	assert_int_equal(sufs_close(t.fs), 0);
	t.fs = NULL;
	only_leaks(t.path, "forgetting after a failed epoch");
	tu_destroy(&t);
	return forgotten;
}

static void test_no_forgetting_after_a_failed_epoch(void **state)
{
	(void)state;
	assert_int_equal(forgotten_after(0), 1);
	assert_int_equal(forgotten_after(1), 0);
}

/* Reads that fail (the image reopened: nothing cached) fail the lookup
 * and the read with EIO and leave nothing behind in the cache: once the
 * device reads again, the same calls find the name and the bytes. */
static void a_read_that_fails_is_read_again_later(void **state)
{
	struct tfs t = { 0 };
	uint8_t out[3000], in[3000];
	uint32_t d, f, ino;
	size_t done;

	(void)state;
	fresh(&t, SUFS_MODE_SOFTDEP);
	assert_int_equal(sufs_mkdir(t.fs, SUFS_ROOT_INO, NAME("d"), 0755, &user, &d), 0);
	assert_int_equal(sufs_create(t.fs, d, NAME("f"), 0644, &user, &f), 0);
	tu_pattern_fill(out, sizeof(out), 9, 0);
	assert_int_equal(sufs_write(t.fs, f, 0, out, sizeof(out)), 0);
	assert_int_equal(sufs_close(t.fs), 0);
	t.fs = NULL;
	fresh_reopen(&t);

	reads_fail = 1;
	assert_int_equal(sufs_lookup(t.fs, d, NAME("f"), &ino), -EIO);
	assert_int_equal(sufs_read(t.fs, f, 0, in, sizeof(in), &done), -EIO);
	reads_fail = 0;
	assert_int_equal(sufs_lookup(t.fs, d, NAME("f"), &ino), 0);
	assert_int_equal(ino, f);
	assert_int_equal(sufs_read(t.fs, f, 0, in, sizeof(in), &done), 0);
	assert_int_equal(done, sizeof(in));
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(sufs_close(t.fs), 0);
	t.fs = NULL;
	only_leaks(t.path, "after failed reads");
	tu_destroy(&t);
}

/* One test: a kind of fault, in a mode, once or for good, before a
 * crash or not. */
struct scenario {
	enum fault kind;
	unsigned mode;
	int stay, crash;
};

static void scenario(void **state)
{
	const struct scenario *sc = *state;

	every_event(sc->kind, sc->mode, sc->stay, sc->crash);
}

#define SCENARIO(name, kind, mode, stay, crash) \
	{ name, scenario, NULL, NULL, &(struct scenario){ kind, mode, stay, crash } }

int main(void)
{
	const struct CMUnitTest tests[] = {
		SCENARIO("one_failed_allocation_in_softdep_mode_leaves_only_leaks",
			 ALLOC, SUFS_MODE_SOFTDEP, 0, 0),
		SCENARIO("memory_gone_for_good_in_softdep_mode_leaves_only_leaks",
			 ALLOC, SUFS_MODE_SOFTDEP, 1, 0),
		SCENARIO("a_crash_after_memory_ran_out_leaves_only_leaks_or_a_flagged_image",
			 ALLOC, SUFS_MODE_SOFTDEP, 0, 1),
		SCENARIO("one_failed_allocation_in_sync_mode_leaves_only_leaks",
			 ALLOC, SUFS_MODE_SYNC, 0, 0),
		SCENARIO("one_failed_allocation_in_async_mode_leaves_only_leaks",
			 ALLOC, SUFS_MODE_ASYNC, 0, 0),
		SCENARIO("one_failed_write_in_softdep_mode_is_made_again",
			 IO, SUFS_MODE_SOFTDEP, 0, 0),
		SCENARIO("a_device_dead_from_any_write_on_in_softdep_mode_holds_only_leaks",
			 IO, SUFS_MODE_SOFTDEP, 1, 0),
		SCENARIO("one_failed_write_in_sync_mode_is_made_again",
			 IO, SUFS_MODE_SYNC, 0, 0),
		SCENARIO("a_device_dead_from_any_write_on_in_sync_mode_holds_only_leaks",
			 IO, SUFS_MODE_SYNC, 1, 0),
		SCENARIO("one_failed_write_in_async_mode_is_made_again",
			 IO, SUFS_MODE_ASYNC, 0, 0),
		cmocka_unit_test(test_no_forgetting_after_a_failed_epoch),
		cmocka_unit_test(a_read_that_fails_is_read_again_later),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
