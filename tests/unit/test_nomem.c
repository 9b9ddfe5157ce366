/*
 * test_nomem.c - running out of memory in the middle of the operations.
 *
 * The library's malloc, calloc and realloc are wrapped (the link's
 * --wrap): a test arms a failure at the n-th allocation from now, either
 * of that one allocation or of every one from it on, runs a fixed
 * workload whose operations may then fail (their errors are expected and
 * ignored), disarms, syncs and closes.  For every n the image must then be
 * whole: a full check finds nothing worse than leaks (an operation cut
 * short may leave an inode or block allocated that nothing names).  When
 * the engine lost track of an ordering (sync says -ENOMEM), the image must
 * say that it needs a full check.  A crash instead of the sync must leave
 * nothing worse than leaks, or an image that says it needs a full check
 * (and that the check repairs); once the ordering is lost, the next write
 * must leave the image saying so.
 *
 * make check tries every allocation of the workload's first 64 and then
 * every 7th; SUFS_NOMEM_ALL=1 tries every one (a run of minutes).
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static long countdown = -1;     /* allocations before the failing one; -1: off */
static int persistent;          /* once failing, every later one fails too */
static unsigned long allocations, failures;

static int fail_now(void)
{
	allocations++;
	if (countdown < 0)
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

void *__wrap_malloc(size_t size)
{
	return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fail_now() ? NULL : __real_realloc(p, size);
}

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

/* A fresh small image (1 KiB blocks), open for writing in mode. */
static void fresh(struct tfs *t, unsigned mode)
{
	struct sufs_mkfs_opts o;

	tu_default_opts(&o, 1024);
	o.inodes = 256;
	tu_make_opts(t, 4 << 20, &o);
	tu_reopen(t, SUFS_OPEN_RDWR);
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
static void only_leaks(const char *path, long n, int stay)
{
	struct sufs_check_opts o = { .flags = SUFS_CHECK_NO | SUFS_CHECK_FORCE };
	struct sufs_check_result r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(sufs_check(path, &o, &r), 0);
	if (r.nonleaks != 0)
		fail_msg("allocation %ld (%s): the check found %u problems worse than leaks",
			 n, stay ? "and all after" : "only", r.nonleaks);
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

/*
 * The workload with the n-th allocation failing (n < 0: none), then sync
 * and close, or a crash.  After close the image must be whole (nothing
 * worse than leaks), and flagged when sync said the ordering was lost.
 * After a crash it must hold nothing worse than leaks, unless it is
 * flagged; then a repair must make it whole.  Returns what sync said (0
 * or -ENOMEM; 0 after a crash); `allocations` is left as the workload's
 * count.
 */
static int run(unsigned mode, long n, int stay, int crash)
{
	struct tfs t = { 0 };
	unsigned long made;
	int sync_err = 0;

	fresh(&t, mode);
	allocations = failures = 0;
	persistent = stay;
	countdown = n;
	workload(t.fs);
	countdown = -1;
	made = allocations;
	if (crash) {
		if (t.fs->deps.failed) {
			/* an ordering was lost: once anything more is written,
			 * the image says so */
			int written = sufs_deps_flush(t.fs, NULL, NULL);

			assert_true(written >= 0);
			sufs_abandon(t.fs);
			t.fs = NULL;
			assert_true(!written || flagged(t.path));
		} else {
			sufs_abandon(t.fs);
			t.fs = NULL;
		}
		if (flagged(t.path))
			repaired(t.path);
		else
			only_leaks(t.path, n, stay);
	} else {
		sync_err = sufs_sync(t.fs);
		if (sync_err != 0 && sync_err != -ENOMEM)
			fail_msg("allocation %ld: sync: %s", n, sufs_strerror(sync_err));
		/* close says what sync said: all is written, in order or not */
		assert_int_equal(sufs_close(t.fs), sync_err);
		t.fs = NULL;
		only_leaks(t.path, n, stay);
		/* the ordering was lost: the image says so */
		assert_int_equal(flagged(t.path), sync_err == -ENOMEM);
	}
	tu_destroy(&t);
	allocations = made;
	return sync_err;
}

static void every_allocation(unsigned mode, int stay, int crash)
{
	unsigned long total;
	int all = getenv("SUFS_NOMEM_ALL") != NULL;
	long n, tried = 0, lost = 0;

	assert_int_equal(run(mode, -1, 0, crash), 0);
	total = allocations;
	assert_int_equal(failures, 0);
	assert_true(total > 100);
	for (n = 0; n < (long)total; n += all || n < 64 ? 1 : 7, tried++) {
		lost += run(mode, n, stay, crash) == -ENOMEM;
		assert_int_equal(failures > 0, 1);
	}
	if (crash)
		print_message("%lu allocations; %ld failed one by one, each before a crash\n",
			      total, tried);
	else
		print_message("%lu allocations; %ld failed one by one, %ld of them losing an "
			      "ordering\n", total, tried, lost);
}

static void one_failed_allocation_in_softdep_mode_leaves_only_leaks(void **state)
{
	(void)state;
	every_allocation(SUFS_MODE_SOFTDEP, 0, 0);
}

static void memory_gone_for_good_in_softdep_mode_leaves_only_leaks(void **state)
{
	(void)state;
	every_allocation(SUFS_MODE_SOFTDEP, 1, 0);
}

static void a_crash_after_memory_ran_out_leaves_only_leaks_or_a_flagged_image(void **state)
{
	(void)state;
	every_allocation(SUFS_MODE_SOFTDEP, 0, 1);
}

static void one_failed_allocation_in_sync_mode_leaves_only_leaks(void **state)
{
	(void)state;
	every_allocation(SUFS_MODE_SYNC, 0, 0);
}

static void one_failed_allocation_in_async_mode_leaves_only_leaks(void **state)
{
	(void)state;
	every_allocation(SUFS_MODE_ASYNC, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_failed_allocation_in_softdep_mode_leaves_only_leaks),
		cmocka_unit_test(memory_gone_for_good_in_softdep_mode_leaves_only_leaks),
		cmocka_unit_test(a_crash_after_memory_ran_out_leaves_only_leaks_or_a_flagged_image),
		cmocka_unit_test(one_failed_allocation_in_sync_mode_leaves_only_leaks),
		cmocka_unit_test(one_failed_allocation_in_async_mode_leaves_only_leaks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
