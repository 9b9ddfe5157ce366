/*
 * test_snap.c - snapshots: the view stays as it was taken while the file
 * system changes under it (overwrites, removals, truncation, new files),
 * across reopening, with several snapshots at once and in every write mode;
 * deleting gives back exactly what the snapshot held; the view checks clean;
 * the errors.
 */
#include "config.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct sufs_cred root = { 0, 0 };

static int setup(void **state)
{
	return tu_setup_4k(state);
}

static uint32_t mkfile(struct sufs_fs *fs, const char *name, uint64_t len, uint32_t seed)
{
	uint32_t ino = 0;
	uint8_t *buf = malloc(len ? len : 1);

	assert_non_null(buf);
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, name, strlen(name), 0644, &root, &ino), 0);
	tu_pattern_fill(buf, len, seed, 0);
	assert_int_equal(sufs_write(fs, ino, 0, buf, len), 0);
	free(buf);
	return ino;
}

static void overwrite(struct sufs_fs *fs, const char *name, uint64_t len, uint32_t seed)
{
	uint32_t ino;
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, name, strlen(name), &ino), 0);
	tu_pattern_fill(buf, len, seed, 0);
	assert_int_equal(sufs_write(fs, ino, 0, buf, len), 0);
	free(buf);
}

/* The file name in fs has len bytes of the pattern seed. */
static void assert_file(struct sufs_fs *fs, const char *name, uint64_t len, uint32_t seed)
{
	struct sufs_stat st;
	uint32_t ino;
	size_t got = 0;
	uint8_t *buf = malloc(len + 1);

	assert_non_null(buf);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, name, strlen(name), &ino), 0);
	assert_int_equal(sufs_stat(fs, ino, &st), 0);
	assert_int_equal(st.size, len);
	assert_int_equal(sufs_read(fs, ino, 0, buf, len + 1, &got), 0);
	assert_int_equal(got, len);
	assert_int_equal(tu_pattern_check(buf, len, seed, 0), -1);
	free(buf);
}

static void assert_absent(struct sufs_fs *fs, const char *name)
{
	uint32_t ino;

	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, name, strlen(name), &ino), -ENOENT);
}

static void print_problem(void *arg, const struct sufs_problem *p, int fixed)
{
	(void)arg; (void)fixed;
	print_message("problem: %s\n", p->message);
}

/* A full check of a device finds nothing. */
static void assert_clean(struct sufs_dev *dev)
{
	struct sufs_check_opts o = { .flags = SUFS_CHECK_NO | SUFS_CHECK_FORCE,
				     .report = print_problem };
	struct sufs_check_result r;

	assert_int_equal(sufs_check_dev(dev, &o, &r), 0);
	assert_int_equal(r.problems, 0);
	assert_int_equal(r.status, 0);
}

/* Open snapshot name's view as a file system (and check it clean). */
static struct sufs_fs *view_open(struct sufs_fs *fs, const char *name, struct sufs_dev **dev)
{
	struct sufs_fs *v;

	assert_int_equal(sufs_snap_open_dev(fs, name, dev), 0);
	assert_clean(*dev);
	assert_int_equal(sufs_open_dev(*dev, 0, 0, &v), 0);
	return v;
}

static void view_close(struct sufs_fs *v, struct sufs_dev *dev)
{
	(void)dev;
	assert_int_equal(sufs_close(v), 0); /* closes dev too */
}

static void live_clean(struct tfs *t)
{
	struct sufs_dev *dev;

	tu_close(t);
	assert_int_equal(sufs_dev_open(t->path, 0, &dev), 0);
	assert_clean(dev);
	sufs_dev_close(dev);
	tu_reopen(t, SUFS_OPEN_RDWR);
}

/* The workload run after each snapshot: every way a block changes. */
static void change_everything(struct sufs_fs *fs)
{
	uint32_t ino;

	overwrite(fs, "a", 100000, 11);                         /* data in place */
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "b", 1), 0); /* freed: claimed */
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "c", 1, &ino), 0);
	assert_int_equal(sufs_truncate(fs, ino, 1000), 0);      /* indirect tree freed */
	mkfile(fs, "d", 300000, 14);                            /* new blocks */
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "e", 1, SUFS_ROOT_INO, "e2", 2), 0);
}

static void populate(struct sufs_fs *fs)
{
	mkfile(fs, "a", 100000, 1);
	mkfile(fs, "b", 50000, 2);
	mkfile(fs, "c", 600000, 3);
	mkfile(fs, "e", 5000, 5);
}

static void assert_before(struct sufs_fs *v)
{
	assert_file(v, "a", 100000, 1);
	assert_file(v, "b", 50000, 2);
	assert_file(v, "c", 600000, 3);
	assert_file(v, "e", 5000, 5);
	assert_absent(v, "d");
	assert_absent(v, "e2");
}

static void assert_after(struct sufs_fs *fs)
{
	assert_file(fs, "a", 100000, 11);
	assert_absent(fs, "b");
	assert_file(fs, "c", 1000, 3);
	assert_file(fs, "d", 300000, 14);
	assert_file(fs, "e2", 5000, 5);
}

static void in_mode(void **state, unsigned mode)
{
	struct tfs *t = *state;
	struct sufs_snap_info info;
	struct sufs_dev *dev;
	struct sufs_fs *v;

	assert_int_equal(sufs_set_mode(t->fs, mode), 0);
	populate(t->fs);
	assert_int_equal(sufs_snap_create(t->fs, "s1", &info), 0);
	assert_string_equal(info.name, "s1");
	change_everything(t->fs);
	/* while open and pending */
	v = view_open(t->fs, "s1", &dev);
	assert_before(v);
	view_close(v, dev);
	assert_after(t->fs);
	/* after everything went out, and after reopening */
	live_clean(t);
	assert_after(t->fs);
	v = view_open(t->fs, "s1", &dev);
	assert_before(v);
	view_close(v, dev);
}

static void softdep_view_stays(void **state) { in_mode(state, SUFS_MODE_SOFTDEP); }
static void sync_view_stays(void **state) { in_mode(state, SUFS_MODE_SYNC); }
static void async_view_stays(void **state) { in_mode(state, SUFS_MODE_ASYNC); }

/* Copies go on after a reopen: the NEED bits are rebuilt from disk. */
static void reopen_keeps_copying(void **state)
{
	struct tfs *t = *state;
	struct sufs_dev *dev;
	struct sufs_fs *v;

	populate(t->fs);
	assert_int_equal(sufs_snap_create(t->fs, "s", NULL), 0);
	tu_reopen(t, SUFS_OPEN_RDWR);
	change_everything(t->fs);
	live_clean(t);
	v = view_open(t->fs, "s", &dev);
	assert_before(v);
	view_close(v, dev);
}

/* Deleting frees exactly what the snapshot held: the free counts are
 * those of the same changes made without a snapshot. */
static void delete_gives_back_everything(void **state)
{
	struct tfs *t = *state, twin;
	uint64_t with, without;

	populate(t->fs);
	tu_close(t);
	/* the twin: the same image, the same changes, no snapshot */
	twin = *t;
	assert_true(strlen(t->path) + 6 <= sizeof(twin.path));
	memcpy(twin.path + strlen(t->path), ".twin", 6);
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "cp %s %s", t->path, twin.path);
		assert_int_equal(system(cmd), 0);
	}
	tu_reopen(t, SUFS_OPEN_RDWR);
	tu_reopen(&twin, SUFS_OPEN_RDWR);
	assert_int_equal(sufs_snap_create(t->fs, "s", NULL), 0);
	change_everything(t->fs);
	change_everything(twin.fs);
	assert_int_equal(sufs_sync(twin.fs), 0);
	assert_int_equal(sufs_snap_delete(t->fs, "s"), 0);
	assert_int_equal(sufs_snap_find(t->fs, "s", &(struct sufs_snap_info){ 0 }), -SUFS_ENOTSNAP);
	live_clean(t);
	with = sufs_get_super(t->fs)->free_blocks;
	without = sufs_get_super(twin.fs)->free_blocks;
	/* the twin lacks the /.snap directory's block */
	assert_int_equal(with + 1, without);
	tu_destroy(&twin);
}

/* Two snapshots: each sees its own moment; deleting either leaves the
 * other intact (claimed blocks pass to the one that still needs them). */
static void two_snapshots(void **state)
{
	struct tfs *t = *state;
	struct sufs_snap_info list[SUFS_SNAP_SLOTS];
	struct sufs_dev *dev;
	struct sufs_fs *v;
	unsigned n, first;

	for (first = 0; first < 2; first++) {
		if (first) {
			assert_int_equal(tu_teardown(state), 0);
			assert_int_equal(tu_setup_4k(state), 0);
			t = *state;
		}
		populate(t->fs);
		assert_int_equal(sufs_snap_create(t->fs, "old", NULL), 0);
		overwrite(t->fs, "a", 100000, 21);
		assert_int_equal(sufs_snap_create(t->fs, "new", NULL), 0);
		change_everything(t->fs);
		assert_int_equal(sufs_snap_list(t->fs, list, &n), 0);
		assert_int_equal(n, 2);
		assert_string_equal(list[0].name, "old");
		assert_string_equal(list[1].name, "new");
		/* delete one, then the other must still read right */
		assert_int_equal(sufs_snap_delete(t->fs, first ? "new" : "old"), 0);
		live_clean(t);
		v = view_open(t->fs, first ? "old" : "new", &dev);
		if (first) {
			assert_before(v);
		} else {
			assert_file(v, "a", 100000, 21);
			assert_file(v, "b", 50000, 2);
			assert_file(v, "c", 600000, 3);
		}
		assert_absent(v, "d");
		view_close(v, dev);
		assert_int_equal(sufs_snap_delete(t->fs, first ? "old" : "new"), 0);
		live_clean(t);
	}
}

static void errors(void **state)
{
	struct tfs *t = *state;
	struct sufs_snap_info info;
	uint32_t dir, ino;
	char name[16];
	unsigned i;

	populate(t->fs);
	assert_int_equal(sufs_snap_create(t->fs, "", NULL), -EINVAL);
	assert_int_equal(sufs_snap_create(t->fs, "a/b", NULL), -EINVAL);
	assert_int_equal(sufs_snap_create(t->fs, "..", NULL), -EINVAL);
	assert_int_equal(sufs_snap_find(t->fs, "none", &info), -SUFS_ENOTSNAP);
	assert_int_equal(sufs_snap_delete(t->fs, "none"), -SUFS_ENOTSNAP);
	assert_int_equal(sufs_snap_create(t->fs, "s", NULL), 0);
	assert_int_equal(sufs_snap_create(t->fs, "s", NULL), -EEXIST);
	/* the snapshot file is the library's own */
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, ".snap", 5, &dir), 0);
	assert_int_equal(sufs_lookup(t->fs, dir, "s", 1, &ino), 0);
	assert_int_equal(sufs_write(t->fs, ino, 0, "x", 1), -EPERM);
	assert_int_equal(sufs_truncate(t->fs, ino, 0), -EPERM);
	assert_int_equal(sufs_unlink(t->fs, dir, "s", 1), -EPERM);
	assert_int_equal(sufs_rename(t->fs, dir, "s", 1, SUFS_ROOT_INO, "x", 1), -EPERM);
	assert_int_equal(sufs_link(t->fs, ino, SUFS_ROOT_INO, "x", 1), -EPERM);
	/* a user's file in /.snap is not a snapshot */
	assert_int_equal(sufs_create(t->fs, dir, "mine", 4, 0644, &root, &ino), 0);
	assert_int_equal(sufs_snap_delete(t->fs, "mine"), -SUFS_ENOTSNAP);
	for (i = 1; i < SUFS_SNAP_SLOTS; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		assert_int_equal(sufs_snap_create(t->fs, name, NULL), 0);
	}
	assert_int_equal(sufs_snap_create(t->fs, "one-more", NULL), -SUFS_ENOSLOT);
	for (i = 1; i < SUFS_SNAP_SLOTS; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		assert_int_equal(sufs_snap_delete(t->fs, name), 0);
	}
	live_clean(t);
}

/* No room for copies: the snapshot is marked broken, the live file system
 * stays whole. */
static void no_room_breaks_the_snapshot(void **state)
{
	struct tfs *t = *state;
	struct sufs_snap_info info;
	uint32_t ino;
	int rc;
	uint64_t off = 0;
	static uint8_t buf[65536];

	populate(t->fs);
	assert_int_equal(sufs_snap_create(t->fs, "s", NULL), 0);
	/* fill the file system */
	assert_int_equal(sufs_create(t->fs, SUFS_ROOT_INO, "fill", 4, 0644, &root, &ino), 0);
	do {
		rc = sufs_write(t->fs, ino, off, buf, sizeof(buf));
		off += sizeof(buf);
	} while (rc == 0);
	assert_int_equal(rc, -ENOSPC);
	overwrite(t->fs, "c", 600000, 31); /* copies find no room */
	assert_int_equal(sufs_snap_find(t->fs, "s", &info), 0);
	assert_true(info.broken);
	assert_int_equal(sufs_snap_open_dev(t->fs, "s", &(struct sufs_dev *){ NULL }),
			 -SUFS_ECORRUPT);
	assert_file(t->fs, "c", 600000, 31);
	assert_int_equal(sufs_snap_delete(t->fs, "s"), 0);
	live_clean(t);
}

/* On a damaged image a block the snapshot needs (it claims what is freed)
 * may look free in the block bitmap.  It is not handed out: the file that
 * has it keeps it, and no copy is needed (a copy into such a block would
 * need a copy of its own, and so on). */
static void a_needed_block_that_looks_free_is_not_allocated(void **state)
{
	struct tfs *t = *state;
	struct sufs_dev *dev;
	struct sufs_fs *v;
	uint64_t blk, p, i;
	uint32_t a, d;

	populate(t->fs);
	assert_int_equal(sufs_snap_create(t->fs, "s", NULL), 0);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "a", 1, &a), 0);
	assert_int_equal(sufs_bmap(t->fs, a, 0, &blk), 0);
	assert_int_equal(sufs_bitmap_set(t->fs, SUFS_BITMAP_BLOCK, blk, 0), 0); /* the damage */
	d = mkfile(t->fs, "d", 300000, 14);
	for (i = 0; i * 4096 < 300000; i++) {
		assert_int_equal(sufs_bmap(t->fs, d, i, &p), 0);
		assert_int_not_equal(p, blk);
	}
	assert_file(t->fs, "a", 100000, 1);
	assert_file(t->fs, "d", 300000, 14);
	v = view_open(t->fs, "s", &dev);
	assert_before(v);
	view_close(v, dev);
}

/* Nineteen snapshots in a row, then the changes: nineteen copies of each
 * block (holds in a row where one cannot wait for them all), every view
 * right, in softdep and sync modes. */
static void many_snapshots_need_one_block(void **state)
{
	struct tfs *t = *state;
	struct sufs_dev *dev;
	struct sufs_fs *v;
	char name[16];
	unsigned i, mode;

	for (mode = 0; mode < 2; mode++) {
		if (mode) {
			assert_int_equal(tu_teardown(state), 0);
			assert_int_equal(tu_setup_4k(state), 0);
			t = *state;
			assert_int_equal(sufs_set_mode(t->fs, SUFS_MODE_SYNC), 0);
		}
		populate(t->fs);
		/* blocks far into the file system: each snapshot's first copy
		 * of one needs a double indirect path of its own, so that one
		 * change needs more waits than an update holds */
		mkfile(t->fs, "z", 9 << 20, 40);
		for (i = 0; i < 19; i++) {
			snprintf(name, sizeof(name), "s%u", i);
			assert_int_equal(sufs_snap_create(t->fs, name, NULL), 0);
		}
		{
			/* one block at the far end of it, copied nineteen times */
			uint8_t blk[4096];
			uint32_t z;
			tu_pattern_fill(blk, sizeof(blk), 41, 0);
			assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "z", 1, &z), 0);
			assert_int_equal(sufs_write(t->fs, z, (9 << 20) - 4096, blk,
						    sizeof(blk)), 0);
		}
		change_everything(t->fs);
		live_clean(t);
		for (i = 0; i < 19; i++) {
			snprintf(name, sizeof(name), "s%u", i);
			v = view_open(t->fs, name, &dev);
			assert_before(v);
			assert_file(v, "z", 9 << 20, 40);
			view_close(v, dev);
		}
		{
			uint8_t blk[4096];
			uint32_t z;
			size_t got;
			assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "z", 1, &z), 0);
			assert_int_equal(sufs_read(t->fs, z, (9 << 20) - 4096, blk, sizeof(blk),
						   &got), 0);
			assert_int_equal(got, sizeof(blk));
			assert_int_equal(tu_pattern_check(blk, sizeof(blk), 41, 0), -1);
		}
	}
}

/* A view read many blocks at a time (pass 1 of fsck -b reads 8) gives the
 * bytes read a block at a time, with some blocks copied, some changed in
 * the cache and not yet written, the rest read in place. */
static void many_block_reads_match_single_ones(void **state)
{
	struct tfs *t = *state;
	struct sufs_dev *dev;
	uint64_t off, size, chunk = 61 * 4096; /* runs cut at odd places */
	uint8_t *whole, *one;
	size_t n;

	assert_int_equal(sufs_set_mode(t->fs, SUFS_MODE_SOFTDEP), 0);
	populate(t->fs);
	assert_int_equal(sufs_snap_create(t->fs, "s", NULL), 0);
	change_everything(t->fs);
	assert_int_equal(sufs_snap_open_dev(t->fs, "s", &dev), 0);
	size = dev->size;
	whole = malloc(chunk);
	one = malloc(4096);
	assert_non_null(whole);
	assert_non_null(one);
	for (off = 0; off < size; off += chunk) {
		n = size - off < chunk ? (size_t)(size - off) : (size_t)chunk;
		assert_int_equal(sufs_dev_read(dev, off, whole, n), 0);
		for (size_t i = 0; i < n; i += 4096) {
			assert_int_equal(sufs_dev_read(dev, off + i, one, 4096), 0);
			assert_memory_equal(whole + i, one, 4096);
		}
	}
	sufs_dev_prefetch(dev, 0, size); /* a hint, passed on to the live device */
	free(whole);
	free(one);
	sufs_dev_close(dev);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(softdep_view_stays),
		T(sync_view_stays),
		T(async_view_stays),
		T(reopen_keeps_copying),
		T(many_block_reads_match_single_ones),
		T(delete_gives_back_everything),
		T(two_snapshots),
		T(errors),
		T(a_needed_block_that_looks_free_is_not_allocated),
		T(no_room_breaks_the_snapshot),
		T(many_snapshots_need_one_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
