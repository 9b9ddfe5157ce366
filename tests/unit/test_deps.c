/*
 * test_deps.c - the dependency engine, shown against the invariants that
 * open deps.c and the three rules of soft updates as the operations apply
 * them:
 *
 *   - a write image leaves out what may not be on disk yet, and carries it
 *     once what it waits for is (invariants 3, 4);
 *   - an update over pending bytes waits for the older update or is folded
 *     into it, so undoing newest first restores the bytes (invariant 2);
 *   - updates wait only for older ones: deps_check(, NULL, 0) holds after every
 *     operation of a long random mix (invariant 1);
 *   - every epoch writes something, and a drain ends with nothing pending
 *     (invariant 7); a cycle between blocks resolves by undo;
 *   - what was freed is reused only after the old pointers are gone on disk
 *     (invariant 6, rule 2);
 *   - an update is on disk only after the barrier of its epoch (invariant 5);
 *   - fsync writes exactly what the file needs; sync and async modes;
 *   - and the strongest: a crash after any barrier, or in the middle of any
 *     epoch, leaves a tree whose only faults are leaks.
 *
 * The synthetic tests drive the engine directly on free data blocks of the
 * 16 MiB test image (buf_get, buf_update, deps_image, deps_epoch); the rest
 * use the public operations.  Two devices help: one in memory, and one that
 * records every block written and can drop the writes after a chosen
 * barrier (a crash), wrapped around another device.
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"
#include "engine/deps_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Free data blocks of the 16 MiB, 4 KiB-block test image. */
#define AREA 1000u

#define NOW_SEC (TU_TIME_SEC + 1000)

static struct sufs_fs *fs_of(void **state)
{
	return ((struct tfs *)*state)->fs;
}

/* Write back only when a test asks (or the dirty limit is reached). */
static void quiet(struct sufs_fs *fs)
{
	sufs_set_clock(fs, NOW_SEC, 0);
	sufs_set_writeback(fs, 50, 0);
}

static int setup(void **state)
{
	if (tu_setup_4k(state))
		return -1;
	quiet(fs_of(state));
	return 0;
}

/* A failed assertion leaves at once: unhook what points into its frame. */
static int teardown(void **state)
{
	struct tfs *t = *state;

	if (t && t->fs)
		t->fs->trace = NULL;
	return tu_teardown(state);
}

/* ---- helpers: blocks, updates, images ----------------------------------------- */

/*
 * Change len bytes of blk at off to `byte`, announced as one update of the
 * given kind that waits for waits[0..n).  Returns the id of the update
 * that carries it.
 */
static upd_id kchange(struct sufs_fs *fs, uint64_t blk, uint32_t off, uint32_t len, uint8_t byte,
		      enum upd_kind kind, const upd_id *waits, unsigned n)
{
	struct waits w = { 0 };
	struct buf *b;
	upd_id id;
	unsigned i;

	for (i = 0; i < n; i++)
		waits_add(&w, waits[i]);
	assert_int_equal(buf_get(fs, blk, BUF_DATA, &b), 0);
	id = buf_update(fs, b, off, len, kind, &w);
	memset(b->data + off, byte, len);
	buf_put(fs, b);
	return id;
}

/* The same, of data. */
static upd_id change(struct sufs_fs *fs, uint64_t blk, uint32_t off, uint32_t len, uint8_t byte,
		     const upd_id *waits, unsigned n)
{
	return kchange(fs, blk, off, len, byte, UPD_DATA, waits, n);
}

/* Everything pending goes to disk; nothing may be left. */
static void settle(struct sufs_fs *fs)
{
	assert_int_equal(deps_drain(fs), 0);
	assert_int_equal(fs->deps->pending, 0);
	assert_int_equal(fs->deps->ndeferred, 0);
	assert_int_equal(fs->cache.dirty, 0);
}

/* Put the pattern `seed` on blk, on disk. */
static void put_block(struct sufs_fs *fs, uint64_t blk, uint32_t seed)
{
	struct buf *b;

	assert_int_equal(buf_get_new(fs, blk, BUF_DATA, &b), 0);
	buf_update(fs, b, 0, fs->bsize, UPD_DATA, NULL);
	tu_pattern_fill(b->data, fs->bsize, seed, 0);
	buf_put(fs, b);
	settle(fs);
}

static void disk_block(struct sufs_fs *fs, uint64_t blk, uint8_t *out)
{
	assert_int_equal(sufs_dev_read(fs->dev, blk << fs->bshift, out, fs->bsize), 0);
}

static unsigned image(struct sufs_fs *fs, uint64_t blk, uint8_t *out, unsigned *undone)
{
	struct buf *b = cache_lookup(fs, blk);

	assert_non_null(b);
	return deps_image(fs, b, out, undone);
}

static const uint8_t *cached_bytes(struct sufs_fs *fs, uint64_t blk)
{
	struct buf *b = cache_lookup(fs, blk);

	assert_non_null(b);
	return b->data;
}

static void assert_bytes(const uint8_t *p, uint8_t byte, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != byte)
			fail_msg("byte %zu is 0x%02x, not 0x%02x", i, p[i], byte);
}

static void assert_pattern_at(const uint8_t *p, size_t len, uint32_t seed, uint64_t off)
{
	long bad = tu_pattern_check(p, len, seed, off);

	if (bad >= 0)
		fail_msg("byte %llu is not the pattern's", (unsigned long long)(off + (uint64_t)bad));
}

/* deps_epoch() selectors */
static int want_blk(struct sufs_fs *fs, struct buf *b, void *arg)
{
	(void)fs;
	return b->blk == *(const uint64_t *)arg;
}

static int want_none(struct sufs_fs *fs, struct buf *b, void *arg)
{
	(void)fs;
	(void)b;
	(void)arg;
	return 0;
}

/* The blocks written, in order, through the engine's trace hook. */
struct trace {
	uint64_t blk[1024];
	unsigned n;
};

static void trace_fn(struct sufs_fs *fs, struct buf *b, void *arg)
{
	struct trace *t = arg;

	(void)fs;
	assert_true(t->n < 1024);
	t->blk[t->n++] = b->blk;
}

static int traced(const struct trace *t, uint64_t blk)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (t->blk[i] == blk)
			return 1;
	return 0;
}

/* Pending updates that are not plain data; *kind names one of them. */
static unsigned pending_ordered(struct sufs_fs *fs, const char **kind)
{
	struct upd *u;
	unsigned n = 0;
	size_t i;

	*kind = "none";
	for (i = 0; i < fs->deps->nhash; i++) {
		for (u = fs->deps->hash[i]; u; u = u->hnext) {
			if (u->kind == UPD_DATA)
				continue;
			*kind = deps_kind_name(u->kind);
			n++;
		}
	}
	return n;
}

/* ---- helpers: operations ----------------------------------------------------------- */

static uint32_t mkfile(struct sufs_fs *fs, uint32_t dir, const char *name)
{
	uint32_t ino = 0;
	int rc = sufs_create(fs, dir, name, strlen(name), 0644, NULL, &ino);

	if (rc)
		fail_msg("create \"%s\": %s", name, sufs_strerror(rc));
	return ino;
}

static uint32_t mkdir_(struct sufs_fs *fs, uint32_t dir, const char *name)
{
	uint32_t ino = 0;
	int rc = sufs_mkdir(fs, dir, name, strlen(name), 0755, NULL, &ino);

	if (rc)
		fail_msg("mkdir \"%s\": %s", name, sufs_strerror(rc));
	return ino;
}

static uint32_t lookup(struct sufs_fs *fs, uint32_t dir, const char *name)
{
	uint32_t ino = 0;
	int rc = sufs_lookup(fs, dir, name, strlen(name), &ino);

	if (rc)
		fail_msg("lookup \"%s\": %s", name, sufs_strerror(rc));
	return ino;
}

static void write_pattern(struct sufs_fs *fs, uint32_t ino, uint64_t off, size_t len,
			  uint32_t seed)
{
	uint8_t *buf = malloc(len);
	int rc;

	assert_non_null(buf);
	tu_pattern_fill(buf, len, seed, off);
	rc = sufs_write(fs, ino, off, buf, len);
	free(buf);
	if (rc)
		fail_msg("write to inode %u: %s", ino, sufs_strerror(rc));
}

static void assert_file(struct sufs_fs *fs, uint32_t ino, uint64_t size, uint32_t seed)
{
	struct sufs_stat st;
	uint8_t *buf = malloc(size + 1);
	size_t done = 0;

	assert_non_null(buf);
	assert_int_equal(sufs_stat(fs, ino, &st), 0);
	assert_int_equal(st.size, size);
	assert_int_equal(sufs_read(fs, ino, 0, buf, size, &done), 0);
	assert_int_equal(done, size);
	assert_pattern_at(buf, size, seed, 0);
	free(buf);
}

/* The physical blocks of a file's first n logical blocks. */
static void file_blocks(struct sufs_fs *fs, uint32_t ino, uint64_t *out, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		assert_int_equal(sufs_bmap(fs, ino, i, &out[i]), 0);
		assert_int_not_equal(out[i], 0);
	}
}

static int bit(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n)
{
	int set = -1;

	assert_int_equal(sufs_bitmap_test(fs, which, n, &set), 0);
	return set;
}

/* Where an inode lives: its inode-table block and offset. */
static uint64_t itable_block(struct sufs_fs *fs, uint32_t ino, uint32_t *off)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct sufs_group_layout l;
	uint32_t idx = (ino - 1) % sb->inodes_per_group;

	sufs_group_layout(sb, (ino - 1) / sb->inodes_per_group, &l);
	if (off)
		*off = (idx % fs->inodes_per_block) * SUFS_INODE_SIZE;
	return l.inode_table + idx / fs->inodes_per_block;
}

/* An inode as it stands on disk now. */
static void disk_inode(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, int *zero)
{
	uint8_t *blk = malloc(fs->bsize);
	uint32_t off;

	assert_non_null(blk);
	disk_block(fs, itable_block(fs, ino, &off), blk);
	*zero = sufs_inode_is_zero(blk + off);
	sufs_inode_decode(blk + off, in);
	free(blk);
}

/* ---- devices: in memory, and recording -------------------------------------------- */

/* An image held in memory (the test owns the bytes). */
struct mem {
	uint8_t *bytes;
	size_t size;
};

static int mem_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	struct mem *m = dev->priv;

	if (off > m->size || len > m->size - off)
		return -EIO;
	memcpy(buf, m->bytes + off, len);
	return 0;
}

static int mem_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct mem *m = dev->priv;

	if (off > m->size || len > m->size - off)
		return -EIO;
	memcpy(m->bytes + off, buf, len);
	return 0;
}

static int mem_barrier(struct sufs_dev *dev)
{
	(void)dev;
	return 0;
}

static void mem_close(struct sufs_dev *dev)
{
	(void)dev;
}

static const struct sufs_dev_ops mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.barrier = mem_barrier,
	.close = mem_close,
};

static struct sufs_dev *mem_dev(struct mem *m, int writable)
{
	struct sufs_dev *dev = calloc(1, sizeof(*dev));

	assert_non_null(dev);
	dev->ops = &mem_ops;
	dev->size = m->size;
	dev->writable = writable;
	dev->name = strdup("memory");
	dev->priv = m;
	return dev;
}

/*
 * A device that records every block written (in pieces of at most one
 * block) and the barriers between them, around an inner device.  A crash
 * at barrier N: every write before the N-th barrier reaches the inner
 * device, of the writes after it only those whose bit is set in `keep`
 * (the epoch in flight, any subset of it), nothing later.  Barriers are not
 * passed on: the inner device is a test's scratch image.
 */
struct rec_write {
	uint64_t blk;
	uint64_t epoch;   /* barriers before it */
	int reached;      /* passed to the inner device */
};

struct rec {
	struct sufs_dev *inner;
	uint32_t bsize;
	long stop_after;  /* -1: no crash */
	uint64_t keep;
	int fail_barriers;
	long fail_writes;  /* write calls that succeed before the rest fail; -1: none */
	uint64_t barriers;
	unsigned in_epoch;
	struct rec_write *log;
	size_t n, cap;
};

static int rec_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	struct rec *r = dev->priv;
	return sufs_dev_read(r->inner, off, buf, len);
}

static int rec_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct rec *r = dev->priv;
	const uint8_t *p = buf;
	int err;

	if (r->fail_writes == 0)
		return -EIO;
	if (r->fail_writes > 0)
		r->fail_writes--;
	while (len) {
		size_t n = r->bsize - off % r->bsize;
		struct rec_write *w;

		if (n > len)
			n = len;
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 256;
			r->log = realloc(r->log, r->cap * sizeof(*r->log));
			assert_non_null(r->log);
		}
		w = &r->log[r->n++];
		w->blk = off / r->bsize;
		w->epoch = r->barriers;
		w->reached = r->stop_after < 0 || r->barriers < (uint64_t)r->stop_after ||
			     (r->barriers == (uint64_t)r->stop_after && r->in_epoch < 64 &&
			      (r->keep >> r->in_epoch & 1));
		r->in_epoch++;
		if (w->reached && (err = sufs_dev_write(r->inner, off, p, n)) != 0)
			return err;
		off += n;
		p += n;
		len -= n;
	}
	return 0;
}

static int rec_barrier(struct sufs_dev *dev)
{
	struct rec *r = dev->priv;

	if (r->fail_barriers)
		return -EIO;
	r->barriers++;
	r->in_epoch = 0;
	return 0;
}

static void rec_close(struct sufs_dev *dev)
{
	struct rec *r = dev->priv;

	sufs_dev_close(r->inner);
	r->inner = NULL;
}

static const struct sufs_dev_ops rec_ops = {
	.read = rec_read,
	.write = rec_write,
	.barrier = rec_barrier,
	.close = rec_close,
};

/* Wrap inner; r keeps its log (cleared here) after the device is closed. */
static struct sufs_dev *rec_dev(struct rec *r, struct sufs_dev *inner, uint32_t bsize)
{
	struct sufs_dev *dev = calloc(1, sizeof(*dev));

	assert_non_null(dev);
	r->inner = inner;
	r->bsize = bsize;
	r->stop_after = -1;
	r->keep = 0;
	r->fail_barriers = 0;
	r->fail_writes = -1;
	r->barriers = 0;
	r->in_epoch = 0;
	r->n = 0;
	dev->ops = &rec_ops;
	dev->size = inner->size;
	dev->writable = inner->writable;
	dev->name = strdup("recording");
	dev->priv = r;
	return dev;
}

static int rec_wrote(const struct rec *r, size_t from, uint64_t blk)
{
	size_t i;

	for (i = from; i < r->n; i++)
		if (r->log[i].blk == blk && r->log[i].reached)
			return 1;
	return 0;
}

/* Close the test image and open it again through a recording device. */
static void open_recorded(struct tfs *t, struct rec *r)
{
	struct sufs_dev *inner;
	uint32_t bsize = sufs_get_super(t->fs)->block_size;

	tu_close(t);
	assert_int_equal(sufs_dev_open(t->path, SUFS_DEV_RDWR, &inner), 0);
	assert_int_equal(sufs_open_dev(rec_dev(r, inner, bsize), SUFS_OPEN_RDWR, 0, &t->fs), 0);
	quiet(t->fs);
}

/* A crash: drop the file system without writing, open the image read-only. */
static void crash_and_reopen(struct tfs *t)
{
	sufs_abandon(t->fs);
	t->fs = NULL;
	assert_int_equal(sufs_open(t->path, 0, &t->fs), 0);
}

/* ---- write images ----------------------------------------------------------------------- */

static void a_write_image_undoes_an_update_until_what_it_waits_for_is_on_disk(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t A = AREA, B = AREA + 1;
	uint8_t *img = malloc(fs->bsize), *dsk = malloc(fs->bsize);
	uint64_t undone0;
	unsigned undone;
	upd_id a, b1, b2;

	assert_non_null(img);
	assert_non_null(dsk);
	put_block(fs, B, 1);
	a = change(fs, A, 0, 16, 0xaa, NULL, 0);
	b1 = change(fs, B, 0, 8, 0xb1, NULL, 0);
	b2 = change(fs, B, 100, 8, 0xb2, &a, 1);
	assert_true(a && a < b1 && b1 < b2);
	assert_int_equal(fs->deps->pending, 3);
	/* only what may ever be undone keeps its old bytes */
	assert_null(deps_find(fs, a)->undo);
	assert_null(deps_find(fs, b1)->undo);
	assert_non_null(deps_find(fs, b2)->undo);
	assert_int_equal(fs->deps->undo_bytes, 8);

	/* B's image: b1 is in it, b2 is not (a is not on disk) */
	assert_int_equal(image(fs, B, img, &undone), 1);
	assert_int_equal(undone, 1);
	assert_bytes(img, 0xb1, 8);
	assert_pattern_at(img + 8, 92, 1, 8);
	assert_pattern_at(img + 100, 8, 1, 100);
	assert_pattern_at(img + 108, fs->bsize - 108, 1, 108);
	assert_bytes(cached_bytes(fs, B) + 100, 0xb2, 8);   /* the buffer keeps the newest */
	assert_int_equal(image(fs, A, img, &undone), 1);
	assert_int_equal(undone, 0);
	assert_bytes(img, 0xaa, 16);

	/* the first epoch writes A whole and B without b2 */
	undone0 = fs->deps->undone;
	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 2);
	assert_int_equal(fs->deps->undone, undone0 + 1);
	disk_block(fs, A, dsk);
	assert_bytes(dsk, 0xaa, 16);
	disk_block(fs, B, dsk);
	assert_bytes(dsk, 0xb1, 8);
	assert_pattern_at(dsk + 100, 8, 1, 100);
	assert_null(deps_find(fs, a));
	assert_null(deps_find(fs, b1));
	assert_non_null(deps_find(fs, b2));
	assert_int_equal(cache_lookup(fs, A)->dirty, 0);
	assert_int_equal(cache_lookup(fs, B)->dirty, 1);
	assert_int_equal(fs->cache.dirty, 1);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* a is on disk: b2 may go, and goes with the next epoch */
	assert_int_equal(image(fs, B, img, &undone), 1);
	assert_int_equal(undone, 0);
	assert_bytes(img + 100, 0xb2, 8);
	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 1);
	disk_block(fs, B, dsk);
	assert_bytes(dsk, 0xb1, 8);
	assert_bytes(dsk + 100, 0xb2, 8);
	assert_int_equal(fs->deps->pending, 0);
	assert_int_equal(fs->deps->undo_bytes, 0);
	assert_int_equal(fs->cache.dirty, 0);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	free(img);
	free(dsk);
}

/* A short gap in a run of blocks an epoch writes is filled with the dirty
 * blocks in it, written as their images (all undone when nothing of them
 * may go): one write call, not one per side.  Not at a run's end, not
 * over a block that is not dirty, and not in a flush of a chosen set. */
static void an_epoch_fills_a_short_gap_in_a_run_with_the_dirty_blocks_in_it(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t A = AREA, B = AREA + 1, C = AREA + 2, D = AREA + 4, E = AREA + 5,
		       X = AREA + 10;
	uint8_t *dsk = malloc(fs->bsize);
	uint64_t calls, blocks;
	struct trace t = { .n = 0 };
	upd_id x, a, b, c, e, ids[2];
	upd_id *set;

	assert_non_null(dsk);
	put_block(fs, B, 1);
	put_block(fs, E, 2);
	x = change(fs, X, 0, 8, 0x11, NULL, 0);
	/* B and E may not go before X is on disk */
	b = change(fs, B, 0, 8, 0xbb, &x, 1);
	e = change(fs, E, 0, 8, 0xee, &x, 1);
	a = change(fs, A, 0, 8, 0xaa, NULL, 0);
	c = change(fs, C, 0, 8, 0xcc, NULL, 0);
	change(fs, D, 0, 8, 0xdd, NULL, 0);

	/* a flush of A and C writes them alone: two calls */
	calls = fs->dev->writes;
	ids[0] = a;
	ids[1] = c;
	set = malloc(sizeof(ids));
	assert_non_null(set);
	memcpy(set, ids, sizeof(ids));
	assert_int_equal(deps_flush_set(fs, set, 2), 0);
	assert_int_equal(fs->dev->writes - calls, 2);
	assert_int_equal(cache_lookup(fs, B)->dirty, 1);
	a = change(fs, A, 8, 8, 0xaa, NULL, 0);
	c = change(fs, C, 8, 8, 0xcc, NULL, 0);

	/* a full epoch: A, B (undone) and C in one call; D; X.  E would end
	 * D's run with nothing of it written: it stays out */
	fs->trace = trace_fn;
	fs->trace_arg = &t;
	calls = fs->dev->writes;
	blocks = fs->stats.block_writes;
	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 5);
	fs->trace = NULL;
	assert_int_equal(fs->dev->writes - calls, 3);
	assert_int_equal(fs->stats.block_writes - blocks, 5);
	assert_true(traced(&t, B));
	assert_false(traced(&t, E));
	disk_block(fs, B, dsk);
	assert_pattern_at(dsk, fs->bsize, 1, 0); /* b undone */
	assert_non_null(deps_find(fs, b));
	assert_non_null(deps_find(fs, e));
	assert_null(deps_find(fs, a));
	assert_null(deps_find(fs, c));
	assert_int_equal(cache_lookup(fs, B)->dirty, 1);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	/* X is on disk now: B and E go with the next epoch */
	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 2);
	disk_block(fs, B, dsk);
	assert_bytes(dsk, 0xbb, 8);
	settle(fs);
	free(dsk);
}

/* A short gap of clean blocks of the data area that the cache holds is
 * filled too: they are on disk as they are in memory, and go again in the
 * run.  A gap whose block the cache does not hold is not. */
static void an_epoch_fills_a_short_gap_with_the_clean_blocks_the_cache_holds(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t A = AREA, G1 = AREA + 1, G2 = AREA + 2, C = AREA + 3, D = AREA + 5;
	uint8_t *dsk = malloc(fs->bsize);
	uint64_t calls, blocks;

	assert_non_null(dsk);
	put_block(fs, G1, 7);
	put_block(fs, G2, 8);
	change(fs, A, 0, 8, 0xaa, NULL, 0);
	change(fs, C, 0, 8, 0xcc, NULL, 0);
	change(fs, D, 0, 8, 0xdd, NULL, 0); /* AREA + 4 is not in the cache */
	assert_int_equal(cache_lookup(fs, G1)->dirty, 0);
	calls = fs->dev->writes;
	blocks = fs->stats.block_writes;
	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 5);
	assert_int_equal(fs->dev->writes - calls, 2); /* A to C; D */
	assert_int_equal(fs->stats.block_writes - blocks, 5);
	disk_block(fs, G1, dsk);
	assert_pattern_at(dsk, fs->bsize, 7, 0);
	disk_block(fs, G2, dsk);
	assert_pattern_at(dsk, fs->bsize, 8, 0);
	disk_block(fs, C, dsk);
	assert_bytes(dsk, 0xcc, 8);
	disk_block(fs, D, dsk);
	assert_bytes(dsk, 0xdd, 8);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	settle(fs);
	free(dsk);
}

static void an_overlapping_update_waits_for_the_older_one_and_undo_goes_newest_first(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t C = AREA + 2, D = AREA + 3, E = AREA + 4;
	uint8_t *img = malloc(fs->bsize);
	uint64_t edges0, merged0;
	unsigned undone;
	upd_id p, q, r, u1, u2, u3;

	assert_non_null(img);
	put_block(fs, C, 2);
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);
	r = change(fs, D, 16, 8, 0xd1, NULL, 0); /* never undone, like p: folded into it */
	q = change(fs, E, 0, 8, 0xe0, NULL, 0);
	edges0 = fs->deps->edges;
	merged0 = fs->deps->merged;

	u1 = change(fs, C, 10, 8, 0x11, &p, 1);          /* [10,18) waits p */
	assert_int_equal(fs->deps->edges, edges0 + 1);
	u2 = change(fs, C, 14, 8, 0x22, &q, 1);          /* [14,22) waits q and u1 */
	assert_int_equal(fs->deps->edges, edges0 + 3);
	u3 = change(fs, C, 12, 4, 0x33, &r, 1);          /* [12,16) waits r, u1 and u2 */
	assert_int_equal(fs->deps->edges, edges0 + 6);
	assert_int_equal(fs->deps->merged, merged0);
	assert_true(r == p && p < q && q < u1 && u1 < u2 && u2 < u3);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* nothing of C's may go: undone newest first, the bytes are the old ones */
	assert_int_equal(image(fs, C, img, &undone), 0);
	assert_int_equal(undone, 3);
	assert_pattern_at(img, fs->bsize, 2, 0);

	/* p on disk: u1 may go; u2 waits for q, u3 for u2 */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&D, 1), 1);
	assert_null(deps_find(fs, p));
	assert_int_equal(image(fs, C, img, &undone), 1);
	assert_int_equal(undone, 2);
	assert_pattern_at(img, 10, 2, 0);
	assert_bytes(img + 10, 0x11, 8);
	assert_pattern_at(img + 18, fs->bsize - 18, 2, 18);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* q on disk: all of it */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&E, 1), 1);
	assert_int_equal(image(fs, C, img, &undone), 3);
	assert_int_equal(undone, 0);
	assert_bytes(img + 10, 0x11, 2);
	assert_bytes(img + 12, 0x33, 4);
	assert_bytes(img + 16, 0x22, 6);
	assert_memory_equal(img, cached_bytes(fs, C), fs->bsize);
	settle(fs);
	free(img);
}

/*
 * A change over two pending updates, the newer of which waits for the
 * older, that waits for nothing new folds into the newer: as a name's
 * removal folds into the pending add of its inode number, which waits for
 * the entry's body.
 */
static void a_change_over_two_updates_folds_into_the_newer_when_it_waits_for_the_older(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t C = AREA + 2, D = AREA + 3, E = AREA + 4;
	uint8_t *img = malloc(fs->bsize);
	uint64_t created, merged;
	unsigned undone;
	upd_id p, q, body, num, rm, v;

	assert_non_null(img);
	put_block(fs, C, 2);
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);
	q = change(fs, E, 0, 8, 0xe0, NULL, 0);
	body = change(fs, C, 100, 16, 0x11, &p, 1);     /* [100,116) waits p */
	num = change(fs, C, 100, 4, 0x22, &q, 1);       /* [100,104) waits q and body */
	assert_true(body < num);
	created = fs->deps->created;
	merged = fs->deps->merged;

	rm = change(fs, C, 100, 4, 0x00, NULL, 0);      /* over both: into num */
	assert_int_equal(rm, num);
	assert_int_equal(fs->deps->created, created);
	assert_int_equal(fs->deps->merged, merged + 1);
	/* wider than num, over body's bytes: num grows, still after body */
	v = change(fs, C, 98, 10, 0x33, NULL, 0);
	assert_int_equal(v, num);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	/* a change that waits for something num does not wait for is new */
	assert_true(change(fs, C, 100, 4, 0x44, &p, 1) > num);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* nothing may go: every byte is the old one, undone newest first */
	assert_int_equal(image(fs, C, img, &undone), 0);
	assert_pattern_at(img, fs->bsize, 2, 0);
	/* p on disk: body may go, num (and what folded into it) not */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&D, 1), 1);
	assert_int_equal(image(fs, C, img, &undone), 1);
	assert_pattern_at(img + 98, 2, 2, 98);
	assert_bytes(img + 100, 0x11, 16);
	assert_pattern_at(img + 116, fs->bsize - 116, 2, 116);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	settle(fs);
	free(img);
}

/* Change the 4-byte counter at off of blk by delta, waiting for waits. */
static upd_id count(struct sufs_fs *fs, uint64_t blk, uint32_t off, int32_t delta,
		    const upd_id *waits, unsigned n)
{
	struct waits w = { 0 };
	struct buf *b;
	upd_id id;
	unsigned i;

	for (i = 0; i < n; i++)
		waits_add(&w, waits[i]);
	assert_int_equal(buf_get(fs, blk, BUF_DATA, &b), 0);
	id = buf_count(fs, b, off, 4, delta, UPD_INODEDEP, &w);
	put32(b->data + off, get32(b->data + off) + (uint32_t)delta);
	buf_put(fs, b);
	return id;
}

/*
 * A link count raised for a name in one directory, lowered for a name
 * gone from another and raised again for a third: each change waits for
 * its own name only, and a write image undoes exactly the changes whose
 * names are not on disk, by their deltas, in any order.  A change of the
 * whole inode waits for all of them.
 */
static void changes_of_one_counter_wait_for_their_own_reasons_only(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t C = AREA + 2, D = AREA + 3, E = AREA + 4, F = AREA + 5;
	uint8_t *img = malloc(fs->bsize);
	uint64_t edges0, merged0;
	uint32_t old;
	unsigned undone;
	upd_id p, q, r, up, down, again, all;

	assert_non_null(img);
	put_block(fs, C, 2);
	old = get32(cached_bytes(fs, C) + 64);
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);
	q = change(fs, E, 0, 8, 0xe0, NULL, 0);
	r = change(fs, F, 0, 8, 0xf0, NULL, 0);
	edges0 = fs->deps->edges;
	merged0 = fs->deps->merged;

	up = count(fs, C, 64, +1, &p, 1);
	down = count(fs, C, 64, -1, &q, 1);
	again = count(fs, C, 64, +1, &r, 1);
	/* three records, one wait each: none waits for another */
	assert_true(up < down && down < again);
	assert_int_equal(fs->deps->edges, edges0 + 3);
	assert_int_equal(fs->deps->merged, merged0);
	assert_int_equal(get32(cached_bytes(fs, C) + 64), old + 1);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* nothing on disk: the image holds the old count */
	assert_int_equal(image(fs, C, img, &undone), 0);
	assert_int_equal(undone, 3);
	assert_int_equal(get32(img + 64), old);
	/* q's name on disk: only the lowering goes */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&E, 1), 1);
	assert_int_equal(image(fs, C, img, &undone), 1);
	assert_int_equal(undone, 2);
	assert_int_equal(get32(img + 64), old - 1);
	/* r's too: raised again */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&F, 1), 1);
	assert_int_equal(image(fs, C, img, &undone), 2);
	assert_int_equal(undone, 1);
	assert_int_equal(get32(img + 64), old);
	assert_pattern_at(img, 64, 2, 0);
	assert_pattern_at(img + 68, fs->bsize - 68, 2, 68);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* a change of the whole range (a freed inode's zeroing) waits for
	 * every change of the counter not yet on disk, and is undone first */
	edges0 = fs->deps->edges;
	all = change(fs, C, 0, 128, 0x00, NULL, 0);
	assert_true(all > again);
	assert_int_equal(fs->deps->edges, edges0 + 3);
	assert_int_equal(image(fs, C, img, &undone), 2);
	assert_int_equal(undone, 2);
	assert_int_equal(get32(img + 64), old);
	assert_pattern_at(img, 64, 2, 0);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	settle(fs);
	free(img);
}

static void a_wait_for_a_change_never_undone_on_the_same_block_is_met_by_its_writes(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t C = AREA + 2, D = AREA + 3;
	uint8_t *img = malloc(fs->bsize);
	uint64_t edges0;
	unsigned undone;
	upd_id h, p, x, w[2];

	assert_non_null(img);
	put_block(fs, C, 2);
	h = change(fs, C, 0, 8, 0x11, NULL, 0);  /* never undone */
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);
	edges0 = fs->deps->edges;
	w[0] = h;
	w[1] = p;
	x = change(fs, C, 16, 4, 0x22, w, 2);
	/* only p is waited for: every write of C that carries x carries h */
	assert_int_equal(fs->deps->edges, edges0 + 1);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	assert_int_equal(image(fs, C, img, &undone), 1);
	assert_int_equal(undone, 1);
	assert_bytes(img, 0x11, 8);
	assert_pattern_at(img + 16, 4, 2, 16);
	/* p on disk: x goes too */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&D, 1), 1);
	assert_int_equal(image(fs, C, img, &undone), 2);
	assert_int_equal(undone, 0);
	assert_bytes(img + 16, 0x22, 4);
	assert_non_null(deps_find(fs, x));
	settle(fs);
	free(img);
}

/*
 * A directory's slot is busy while a pending update over it waits for a
 * name on another block, directly or through updates of its own block: a
 * removal that waits for an older one of its block, which waits for its
 * new name elsewhere, when its own new name was forgotten (dir_add() passes
 * over such a slot: a name there would wait as long).  Past 32 updates
 * read the answer is yes.
 */
static void a_slot_is_busy_while_what_lies_over_it_waits_for_a_name_elsewhere_even_through_its_own_block(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t C = AREA + 2, D = AREA + 3, E = AREA + 4, F = AREA + 5;
	const unsigned names = DEPS_KIND(UPD_DIRADD) | DEPS_KIND(UPD_DIRREM);
	const unsigned rem = DEPS_KIND(UPD_DIRREM);
	upd_id n, i, r1, r2, r[40];
	struct buf *c, *f;
	unsigned k;

	put_block(fs, C, 2);
	put_block(fs, F, 3);
	n = kchange(fs, D, 0, 8, 0xd0, UPD_DIRADD, NULL, 0);    /* a new name elsewhere */
	i = kchange(fs, E, 0, 8, 0xe0, UPD_INODEDEP, NULL, 0);  /* an inode */
	r1 = kchange(fs, C, 100, 4, 0, UPD_DIRREM, &n, 1);      /* waits for the name */
	r2 = kchange(fs, C, 200, 4, 0, UPD_DIRREM, &r1, 1);     /* for r1 alone */
	kchange(fs, C, 300, 4, 0x33, UPD_DIRADD, &i, 1);        /* for an inode alone */
	assert_true(r1 && r2 && r1 != r2);
	c = cache_lookup(fs, C);
	assert_true(deps_waits_over(fs, c, 96, 8, names, rem));
	assert_true(deps_waits_over(fs, c, 200, 8, names, rem));
	assert_false(deps_waits_over(fs, c, 300, 8, names, rem));
	assert_false(deps_waits_over(fs, c, 400, 8, names, rem));
	assert_false(deps_waits_over(fs, c, 200, 8, DEPS_KIND(UPD_MKDIR), rem));

	/* a chain of 40 on one block, none waiting for a name: too long to
	 * read to its end, so busy; its first 30 are not */
	for (k = 0; k < 40; k++)
		r[k] = kchange(fs, F, 8 * k, 4, 0, UPD_DIRREM, k ? &r[k - 1] : &i, 1);
	f = cache_lookup(fs, F);
	assert_false(deps_waits_over(fs, f, 8 * 29, 4, names, rem));
	assert_true(deps_waits_over(fs, f, 8 * 39, 4, names, rem));

	/* the name on disk: neither slot of C is busy */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&D, 1), 1);
	assert_false(deps_waits_over(fs, c, 96, 8, names, rem));
	assert_false(deps_waits_over(fs, c, 200, 8, names, rem));
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	settle(fs);
}

static void a_change_waiting_for_nothing_folds_into_the_update_never_undone_but_not_over_an_older_undoable_one(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t C = AREA + 2, D = AREA + 3, F = AREA + 5;
	uint64_t created;
	upd_id h, p, y, z, y2, h2, z2;
	struct upd *hu;

	put_block(fs, C, 2);
	put_block(fs, F, 3);
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);

	/* the fold is older than the undoable update it grows over: the
	 * newest update over those bytes is still the undoable one */
	h = change(fs, C, 0, 4, 0x11, NULL, 0);
	y = change(fs, C, 100, 8, 0x22, &p, 1);
	created = fs->deps->created;
	z = change(fs, C, 200, 4, 0x33, NULL, 0);
	assert_int_equal(z, h);
	assert_int_equal(fs->deps->created, created);
	hu = deps_find(fs, h);
	assert_int_equal(hu->off, 0);
	assert_int_equal(hu->len, 204);
	assert_int_equal(deps_last_over(cache_lookup(fs, C), 100, 8), y);
	assert_int_equal(deps_last_over(cache_lookup(fs, C), 200, 4), h);

	/* a fold newer than an undoable update may not grow over it: waiting
	 * for the fold would not wait for that one */
	y2 = change(fs, F, 100, 8, 0x44, &p, 1);
	h2 = change(fs, F, 0, 4, 0x55, NULL, 0);
	z2 = change(fs, F, 200, 4, 0x66, NULL, 0);
	assert_true(y2 < h2 && h2 < z2);
	assert_int_equal(deps_find(fs, h2)->len, 4);
	assert_int_equal(deps_last_over(cache_lookup(fs, F), 100, 8), y2);
	/* but it grows where no older undoable update lies */
	assert_int_equal(change(fs, F, 204, 4, 0x77, NULL, 0), z2);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	settle(fs);
}

/* waits beyond id[] (rmdir's, for every name renamed out of its
 * directory): all of them kept as edges, and never a merge that would
 * drop them */
static void a_change_waits_for_every_update_of_an_array_longer_than_a_wait_set(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	enum { N = 2 * DEPS_MAX_WAITS + 3 };
	const uint64_t F = AREA + 90;
	upd_id ids[N], first, u;
	struct waits w = { 0 };
	struct buf *b;
	unsigned undone, i;
	uint8_t *img = malloc(fs->bsize);

	assert_non_null(img);
	put_block(fs, F, 7);
	for (i = 0; i < N; i++) /* one update on each of N blocks */
		ids[i] = change(fs, AREA + 100 + i, 0, 8, (uint8_t)i, NULL, 0);
	/* an update of F that waits for nothing new: a later change that
	 * waits for the array must not fold into it */
	first = change(fs, F, 0, 8, 0x11, &ids[0], 1);
	waits_add(&w, ids[0]);
	w.more = ids;
	w.nmore = N;
	assert_int_equal(buf_get(fs, F, BUF_DATA, &b), 0);
	u = buf_update(fs, b, 0, 8, UPD_DATA, &w);
	memset(b->data, 0x22, 8);
	buf_put(fs, b);
	assert_true(u > first);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* every block but the last goes: u still waits, and is undone */
	for (i = 0; i + 1 < N; i++)
		assert_int_equal(deps_epoch(fs, want_blk, &(uint64_t){ AREA + 100 + i }, 1), 1);
	assert_int_equal(image(fs, F, img, &undone), 1);
	assert_int_equal(undone, 1);
	assert_bytes(img, 0x11, 8);
	/* the last one: u may go */
	assert_int_equal(deps_epoch(fs, want_blk, &(uint64_t){ AREA + 100 + N - 1 }, 1), 1);
	assert_int_equal(image(fs, F, img, &undone), 2);
	assert_int_equal(undone, 0);
	assert_bytes(img, 0x22, 8);
	settle(fs);
	free(img);
}

static void a_change_that_adds_no_wait_is_merged_into_the_update_it_overlaps(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t F = AREA + 5, D = AREA + 3, E = AREA + 4;
	uint8_t *img = malloc(fs->bsize);
	uint64_t created, merged, pending;
	unsigned undone;
	upd_id p, q, u, v, w, x;
	struct upd *up;

	assert_non_null(img);
	put_block(fs, F, 3);
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);
	q = change(fs, E, 0, 8, 0xe0, NULL, 0);
	u = change(fs, F, 100, 8, 0x44, &p, 1);
	created = fs->deps->created;
	merged = fs->deps->merged;
	pending = fs->deps->pending;

	/* no wait at all: folded into u, which widens */
	v = change(fs, F, 104, 8, 0x55, NULL, 0);
	assert_int_equal(v, u);
	/* a wait that u already has: folded too */
	w = change(fs, F, 96, 8, 0x66, &p, 1);
	assert_int_equal(w, u);
	up = deps_find(fs, u);
	assert_int_equal(up->off, 96);
	assert_int_equal(up->len, 16);
	assert_int_equal(fs->deps->created, created);
	assert_int_equal(fs->deps->merged, merged + 2);
	assert_int_equal(fs->deps->pending, pending);
	assert_int_equal(fs->deps->undo_bytes, 16);
	/* a new wait: a new update after it */
	x = change(fs, F, 108, 8, 0x77, &q, 1);
	assert_true(x > u);
	assert_int_equal(fs->deps->created, created + 1);
	assert_int_equal(fs->deps->merged, merged + 2);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* neither may go: the merged update restores its oldest bytes */
	assert_int_equal(image(fs, F, img, &undone), 0);
	assert_int_equal(undone, 2);
	assert_pattern_at(img, fs->bsize, 3, 0);

	/* p on disk: u goes with all it merged, x is undone to what it found */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&D, 1), 1);
	assert_int_equal(image(fs, F, img, &undone), 1);
	assert_int_equal(undone, 1);
	assert_bytes(img + 96, 0x66, 8);
	assert_bytes(img + 104, 0x55, 8);
	assert_pattern_at(img + 112, 4, 3, 112);
	assert_bytes(cached_bytes(fs, F) + 108, 0x77, 8);
	settle(fs);
	free(img);
}

/*
 * A block with hundreds of pending updates (a big directory's block, all
 * its entries new) finds what a change overlaps through its index of
 * grains (64ths of the block), across their borders, when the holes left
 * by updates gone to disk are squeezed out, and past 32 overlaps.
 */
static void a_block_with_many_pending_updates_finds_every_overlap_through_its_index(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t C = AREA + 2, D = AREA + 3, E = AREA + 4, F = AREA + 5;
	struct buf *b;
	uint64_t edges0;
	upd_id p, q, r, s;
	unsigned i;

	put_block(fs, C, 2);
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);
	q = change(fs, E, 0, 8, 0xe0, NULL, 0);
	r = change(fs, F, 0, 8, 0xf0, NULL, 0);
	/* 300 updates of 8 bytes, 12 apart: four of five wait for p */
	for (i = 0; i < 300; i++)
		change(fs, C, 12 * i, 8, (uint8_t)i, i % 5 ? &p : &q, 1);
	b = cache_lookup(fs, C);
	assert_int_equal(bd(b)->nspans, 300);
	assert_true(bd(b)->gwords > 0);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* [52, 80) lies over updates 4, 5 and 6; [244, 268) over 20, 21 and
	 * 22, either side of a grain's end (256), as [52, 80) is of 64 */
	edges0 = fs->deps->edges;
	change(fs, C, 52, 28, 0x55, &r, 1);
	assert_int_equal(fs->deps->edges, edges0 + 1 + 3);
	edges0 = fs->deps->edges;
	change(fs, C, 244, 24, 0x66, &r, 1);
	assert_int_equal(fs->deps->edges, edges0 + 1 + 3);
	/* a range between two updates overlaps none */
	edges0 = fs->deps->edges;
	change(fs, C, 12 * 100 + 8, 4, 0x77, &r, 1);
	assert_int_equal(fs->deps->edges, edges0 + 1);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* p on disk, then C: what waited only for p goes; the 60 that wait for
	 * q, and the three that wait for r, stay, their spans squeezed */
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&D, 1), 1);
	assert_int_equal(deps_epoch(fs, want_blk, (void *)&C, 1), 1);
	assert_int_equal(bd(b)->nundo, 63);
	assert_true(bd(b)->nspans < 300);
	assert_true(bd(b)->gwords > 0);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* [0, 100) lies over 0 and 5 (waiting for q; 4 and 6 went), and the
	 * [52, 80) that waits for r, which does not wait for 0: no fold */
	edges0 = fs->deps->edges;
	s = change(fs, C, 0, 100, 0x88, NULL, 0);
	assert_true(s != 0);
	assert_int_equal(fs->deps->edges, edges0 + 3);
	/* the whole block: past 32 overlaps, each one waited for */
	edges0 = fs->deps->edges;
	change(fs, C, 0, fs->bsize, 0x99, &r, 1);
	assert_int_equal(fs->deps->edges, edges0 + 1 + (bd(b)->nundo - 1));
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	settle(fs);
	assert_null(bd(b)->grains);
}

static void old_bytes_that_are_all_zero_are_kept_as_a_flag_not_a_copy(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t G = AREA + 6, H = AREA + 7, D = AREA + 3;
	uint8_t *img = malloc(fs->bsize);
	unsigned undone;
	upd_id p, z, z2, h, h2;
	struct upd *u;

	assert_non_null(img);
	p = change(fs, D, 0, 8, 0xd0, NULL, 0);
	/* G is zeros: an update over it that waits keeps a flag */
	z = change(fs, G, 0, 8, 0x12, &p, 1);
	u = deps_find(fs, z);
	assert_int_equal(u->zero_undo, 1);
	assert_null(u->undo);
	assert_int_equal(fs->deps->undo_bytes, 0);
	z2 = change(fs, G, 4, 8, 0x13, NULL, 0);        /* grows over zeros only */
	assert_int_equal(z2, z);
	assert_int_equal(u->len, 12);
	assert_int_equal(u->zero_undo, 1);
	assert_int_equal(image(fs, G, img, &undone), 0);
	assert_bytes(img, 0, fs->bsize);

	/* H: zeros at [0,8), the pattern from 8 on; growing over the pattern
	 * turns the flag into a copy */
	put_block(fs, H, 4);
	change(fs, H, 0, 8, 0, NULL, 0);
	settle(fs);
	p = change(fs, D, 0, 8, 0xd2, NULL, 0);
	assert_false(cached_bytes(fs, H)[8] == 0 && cached_bytes(fs, H)[9] == 0 &&
		     cached_bytes(fs, H)[10] == 0 && cached_bytes(fs, H)[11] == 0);
	h = change(fs, H, 0, 8, 0x21, &p, 1);
	assert_int_equal(deps_find(fs, h)->zero_undo, 1);
	h2 = change(fs, H, 4, 8, 0x22, NULL, 0);
	assert_int_equal(h2, h);
	u = deps_find(fs, h);
	assert_int_equal(u->zero_undo, 0);
	assert_non_null(u->undo);
	assert_int_equal(fs->deps->undo_bytes, 12);
	assert_int_equal(image(fs, H, img, &undone), 0);
	assert_bytes(img, 0, 8);
	assert_pattern_at(img + 8, fs->bsize - 8, 4, 8);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	settle(fs);
	free(img);
}

/* ---- invariant (1) under a random mix of operations --------------------------------- */

#define RNAMES 1024
#define RINODES 2048

struct rname {
	uint32_t dir, ino;
	char name[8];
	unsigned type;          /* S_IFREG, S_IFDIR, S_IFLNK */
};

struct model {
	struct rname n[RNAMES];
	unsigned count;
	uint64_t size[RINODES];
	uint64_t rnd;
};

static uint32_t rnd(struct model *m, uint32_t below)
{
	m->rnd ^= m->rnd << 13;
	m->rnd ^= m->rnd >> 7;
	m->rnd ^= m->rnd << 17;
	return (uint32_t)(m->rnd % below);
}

static int m_find(const struct model *m, uint32_t dir, const char *name)
{
	unsigned i;

	for (i = 0; i < m->count; i++)
		if (m->n[i].dir == dir && !strcmp(m->n[i].name, name))
			return (int)i;
	return -1;
}

static unsigned m_children(const struct model *m, uint32_t dir)
{
	unsigned i, n = 0;

	for (i = 0; i < m->count; i++)
		n += m->n[i].dir == dir;
	return n;
}

static unsigned m_names_of(const struct model *m, uint32_t ino)
{
	unsigned i, n = 0;

	for (i = 0; i < m->count; i++)
		n += m->n[i].ino == ino;
	return n;
}

static unsigned m_subdirs(const struct model *m, uint32_t dir)
{
	unsigned i, n = 0;

	for (i = 0; i < m->count; i++)
		n += m->n[i].dir == dir && m->n[i].type == S_IFDIR;
	return n;
}

static uint32_t m_parent(const struct model *m, uint32_t dir)
{
	unsigned i;

	for (i = 0; i < m->count; i++)
		if (m->n[i].ino == dir && m->n[i].type == S_IFDIR)
			return m->n[i].dir;
	return 0;
}

/* Is dir top or below it? */
static int m_within(const struct model *m, uint32_t dir, uint32_t top)
{
	while (dir && dir != SUFS_ROOT_INO) {
		if (dir == top)
			return 1;
		dir = m_parent(m, dir);
	}
	return top == SUFS_ROOT_INO;
}

static void m_remove(struct model *m, int i)
{
	m->n[i] = m->n[--m->count];
}

static void m_add(struct model *m, uint32_t dir, const char *name, uint32_t ino, unsigned type)
{
	assert_true(m->count < RNAMES);
	assert_true(ino < RINODES);
	m->n[m->count].dir = dir;
	m->n[m->count].ino = ino;
	m->n[m->count].type = type;
	snprintf(m->n[m->count].name, sizeof(m->n[0].name), "%s", name);
	m->count++;
}

/* A random directory (the root counts as one). */
static uint32_t m_dir(struct model *m)
{
	uint32_t dirs[RNAMES + 1];
	unsigned i, n = 0;

	dirs[n++] = SUFS_ROOT_INO;
	for (i = 0; i < m->count; i++)
		if (m->n[i].type == S_IFDIR)
			dirs[n++] = m->n[i].ino;
	return dirs[rnd(m, n)];
}

/* A random name of the given type (0: any), or -1. */
static int m_pick(struct model *m, unsigned type)
{
	int idx[RNAMES];
	unsigned i, n = 0;

	for (i = 0; i < m->count; i++)
		if (!type || m->n[i].type == type)
			idx[n++] = (int)i;
	return n ? idx[rnd(m, n)] : -1;
}

static const char *long_target(void)
{
	static char t[301];
	unsigned i;

	for (i = 0; i < 300; i++)
		t[i] = (char)('a' + i % 26);
	t[300] = 0;
	return t;
}

/* One random operation, its result checked against the model. */
static const char *random_op(struct sufs_fs *fs, struct model *m)
{
	char name[8];
	uint32_t dir = m_dir(m), ino = 0;
	int i, j, rc, want;

	snprintf(name, sizeof(name), "n%02u", rnd(m, 40));
	switch (rnd(m, 14)) {
	case 0:
	case 1:
		want = m_find(m, dir, name) >= 0 ? -EEXIST : 0;
		rc = sufs_create(fs, dir, name, strlen(name), 0644, NULL, &ino);
		assert_int_equal(rc, want);
		if (!rc) {
			m_add(m, dir, name, ino, S_IFREG);
			m->size[ino] = 0;
		}
		return "create";
	case 2:
		want = m_find(m, dir, name) >= 0 ? -EEXIST : 0;
		rc = sufs_mkdir(fs, dir, name, strlen(name), 0755, NULL, &ino);
		assert_int_equal(rc, want);
		if (!rc)
			m_add(m, dir, name, ino, S_IFDIR);
		return "mkdir";
	case 3:
	case 4: {
		/* direct, single, double or triple indirect (1 KiB blocks) */
		static const uint64_t zone[4] = { 0, 12u << 10, 200u << 10, 16600u << 10 };
		uint64_t off;
		uint32_t len = 1 + rnd(m, 3000);

		if ((i = m_pick(m, S_IFREG)) < 0)
			return "write (no file)";
		off = zone[rnd(m, 4)] + rnd(m, 60000);
		write_pattern(fs, m->n[i].ino, off, len, rnd(m, 1000));
		if (off + len > m->size[m->n[i].ino])
			m->size[m->n[i].ino] = off + len;
		return "write";
	}
	case 5: {
		uint64_t size;

		if ((i = m_pick(m, S_IFREG)) < 0)
			return "truncate (no file)";
		size = rnd(m, 2) ? rnd(m, (uint32_t)(m->size[m->n[i].ino] + 1)) :
				   m->size[m->n[i].ino] + rnd(m, 100000);
		assert_int_equal(sufs_truncate(fs, m->n[i].ino, size), 0);
		m->size[m->n[i].ino] = size;
		return "truncate";
	}
	case 6:
		if ((i = m_pick(m, 0)) < 0)
			return "unlink (no name)";
		want = m->n[i].type == S_IFDIR ? -EISDIR : 0;
		assert_int_equal(sufs_unlink(fs, m->n[i].dir, m->n[i].name, strlen(m->n[i].name)),
				 want);
		if (!want)
			m_remove(m, i);
		return "unlink";
	case 7:
		if ((i = m_pick(m, 0)) < 0)
			return "rmdir (no name)";
		want = m->n[i].type != S_IFDIR ? -ENOTDIR :
		       m_children(m, m->n[i].ino) ? -ENOTEMPTY : 0;
		assert_int_equal(sufs_rmdir(fs, m->n[i].dir, m->n[i].name, strlen(m->n[i].name)),
				 want);
		if (!want)
			m_remove(m, i);
		return "rmdir";
	case 8:
	case 9: {
		struct rname src;
		int is_dir;

		if ((i = m_pick(m, 0)) < 0)
			return "rename (no name)";
		src = m->n[i];
		is_dir = src.type == S_IFDIR;
		j = m_find(m, dir, name);
		if (is_dir && src.dir != dir && m_within(m, dir, src.ino))
			want = -EINVAL;
		else if (j >= 0 && m->n[j].ino == src.ino)
			want = 0;
		else if (j >= 0 && m->n[j].type == S_IFDIR && !is_dir)
			want = -EISDIR;
		else if (j >= 0 && m->n[j].type != S_IFDIR && is_dir)
			want = -ENOTDIR;
		else if (j >= 0 && m->n[j].type == S_IFDIR && m_children(m, m->n[j].ino))
			want = -ENOTEMPTY;
		else
			want = 0;
		rc = sufs_rename(fs, src.dir, src.name, strlen(src.name), dir, name, strlen(name));
		if (rc != want)
			fail_msg("rename %u/%s -> %u/%s: %s, not %s", src.dir, src.name, dir, name,
				 sufs_strerror(rc), sufs_strerror(want));
		if (rc || (j >= 0 && m->n[j].ino == src.ino))
			return "rename";
		if (j >= 0) {
			m_remove(m, j);
			i = m_find(m, src.dir, src.name);
		}
		m_remove(m, i);
		m_add(m, dir, name, src.ino, src.type);
		return "rename";
	}
	case 10:
		if ((i = m_pick(m, S_IFREG)) < 0)
			return "link (no file)";
		want = m_find(m, dir, name) >= 0 ? -EEXIST : 0;
		assert_int_equal(sufs_link(fs, m->n[i].ino, dir, name, strlen(name)), want);
		if (!want)
			m_add(m, dir, name, m->n[i].ino, S_IFREG);
		return "link";
	case 11:
		want = m_find(m, dir, name) >= 0 ? -EEXIST : 0;
		rc = sufs_symlink(fs, dir, name, strlen(name), rnd(m, 2) ? "short" : long_target(),
				  NULL, &ino);
		assert_int_equal(rc, want);
		if (!rc)
			m_add(m, dir, name, ino, S_IFLNK);
		return "symlink";
	case 12:
		if ((i = m_pick(m, 0)) < 0)
			return "fsync (no name)";
		assert_int_equal(sufs_fsync(fs, m->n[i].ino), 0);
		return "fsync";
	default:
		if (rnd(m, 20) == 0) {
			assert_int_equal(sufs_sync(fs), 0);
			return "sync";
		}
		assert_true(deps_epoch(fs, NULL, NULL, 1) >= 0);
		return "epoch";
	}
}

static void updates_wait_only_for_older_updates_through_a_random_mix_of_2000_operations(
	void **state)
{
	struct tfs *t = *state;
	struct sufs_mkfs_opts o;
	struct model *m = calloc(1, sizeof(*m));
	struct sufs_stat st;
	const char *what;
	char why[256];
	uint32_t ino;
	unsigned i;

	assert_non_null(m);
	m->rnd = 0x9e3779b97f4a7c15ull;
	tu_destroy(t);
	tu_default_opts(&o, 1024);
	tu_make_opts(t, 16u << 20, &o);
	tu_reopen(t, SUFS_OPEN_RDWR);
	quiet(t->fs);
	/* a small cache: write-back under pressure, in the middle of operations */
	sufs_set_cache_size(t->fs, 96 * 1024);
	for (i = 0; i < 2000; i++) {
		what = random_op(t->fs, m);
		if (deps_check(t->fs, why, sizeof why))
			fail_msg("after operation %u (%s): an invariant of the engine fails: %s", i, what, why);
	}
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(t->fs->deps->pending, 0);
	assert_int_equal(t->fs->deps->ndeferred, 0);
	assert_int_equal(t->fs->cache.dirty, 0);
	tu_assert_summaries(t->fs);

	/* what the model says is what the image holds */
	tu_reopen(t, 0);
	tu_assert_summaries(t->fs);
	assert_true(m->count > 50);
	for (i = 0; i < m->count; i++) {
		const struct rname *n = &m->n[i];

		assert_int_equal(sufs_lookup(t->fs, n->dir, n->name, strlen(n->name), &ino), 0);
		assert_int_equal(ino, n->ino);
		assert_int_equal(sufs_stat(t->fs, ino, &st), 0);
		assert_int_equal(st.mode & S_IFMT, n->type);
		if (n->type == S_IFREG) {
			assert_int_equal(st.size, m->size[ino]);
			assert_int_equal(st.links, m_names_of(m, ino));
		} else if (n->type == S_IFDIR) {
			assert_int_equal(st.links, 2 + m_subdirs(m, ino));
		}
	}
	assert_int_equal(sufs_stat(t->fs, SUFS_ROOT_INO, &st), 0);
	assert_int_equal(st.links, 2 + m_subdirs(m, SUFS_ROOT_INO));
	free(m);
}

/* ---- progress ------------------------------------------------------------------------- */

/* u[i] on block x or y by turns, each waiting for u[i-1]. */
static void chain(struct sufs_fs *fs, uint64_t x, uint64_t y, upd_id *u, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		u[i] = change(fs, i % 2 ? y : x, 8 * i, 8, (uint8_t)(i + 1), i ? &u[i - 1] : NULL,
			      i ? 1 : 0);
}

/*
 * A drain never holds back a block on a longest chain, and holds any other
 * one epoch when it would go with parts undone.  The longest chain is
 * Z1..Z4, four links.  Z1 also carries w, which waits for W's w0: Z1 goes
 * at once, with w undone, and again (held for w, as the drain once held
 * it, the chain took five epochs).  B's u1 is waited for by C's c, one
 * link; its u2 waits for X's x0.  B is held one epoch, while W and X go
 * whole, and then goes once, whole (written at once, it went twice).
 */
static void a_drain_holds_back_only_blocks_off_the_longest_chain_and_takes_its_epochs(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t B = AREA, C = AREA + 2, W = AREA + 4, X = AREA + 6, Z = AREA + 20;
	struct trace t = { .n = 0 };
	upd_id z[4], w0, x0, u1;
	uint64_t epochs;
	unsigned i, writes_of_b = 0, writes_of_z1 = 0;

	for (i = 0; i < 4; i++)
		z[i] = change(fs, Z + 2 * i, 0, 8, 0x20 + i, i ? &z[i - 1] : NULL, i ? 1 : 0);
	w0 = change(fs, W, 0, 8, 0x30, NULL, 0);
	change(fs, Z, 100, 8, 0x31, &w0, 1);
	x0 = change(fs, X, 0, 8, 0x10, NULL, 0);
	u1 = change(fs, B, 0, 8, 0xb1, NULL, 0);
	change(fs, B, 100, 8, 0xb2, &x0, 1);
	change(fs, C, 0, 8, 0xcc, &u1, 1);
	fs->trace = trace_fn;
	fs->trace_arg = &t;
	epochs = fs->deps->epochs;
	settle(fs);
	fs->trace = NULL;
	assert_int_equal(fs->deps->epochs - epochs, 4);
	for (i = 0; i < t.n; i++) {
		writes_of_b += t.blk[i] == B;
		writes_of_z1 += t.blk[i] == Z;
	}
	assert_int_equal(writes_of_b, 1);
	assert_int_equal(writes_of_z1, 2);
}

static void every_epoch_writes_a_block_of_a_long_chain_and_a_drain_ends_with_nothing_pending(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t X = AREA + 10, Y = AREA + 11;
	enum { N = 64 };
	upd_id u[N];
	uint64_t epochs;
	uint8_t *dsk = malloc(fs->bsize);
	unsigned i;

	assert_non_null(dsk);
	chain(fs, X, Y, u, N);
	assert_int_equal(fs->deps->pending, N);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
	/* each epoch can take exactly one more link of the chain */
	epochs = fs->deps->epochs;
	for (i = 0; i < N; i++) {
		assert_non_null(deps_find(fs, u[i]));
		assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 1);
		assert_null(deps_find(fs, u[i]));
		assert_int_equal(fs->deps->pending, N - 1 - i);
		assert_int_equal(deps_check(fs, NULL, 0), 0);
	}
	assert_int_equal(fs->deps->epochs, epochs + N);
	assert_int_equal(fs->cache.dirty, 0);
	disk_block(fs, X, dsk);
	for (i = 0; i < N; i += 2)
		assert_bytes(dsk + 8 * i, (uint8_t)(i + 1), 8);
	disk_block(fs, Y, dsk);
	for (i = 1; i < N; i += 2)
		assert_bytes(dsk + 8 * i, (uint8_t)(i + 1), 8);

	/* deps_drain does the same on its own */
	chain(fs, X + 2, Y + 2, u, N);
	epochs = fs->deps->epochs;
	settle(fs);
	assert_int_equal(fs->deps->epochs, epochs + N);
	free(dsk);
}

static void write_back_of_a_deep_tree_makes_progress_in_every_epoch(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t dir = SUFS_ROOT_INO, f;
	char name[16];
	unsigned i, epochs = 0;
	int n;

	for (i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "d%u", i);
		dir = mkdir_(fs, dir, name);
		f = mkfile(fs, dir, "f");
		write_pattern(fs, f, 0, 5000 + 100 * i, i);
		if (i % 3 == 2)
			assert_int_equal(sufs_rename(fs, dir, "f", 1, dir, "g", 1), 0);
		if (i % 5 == 4)
			assert_int_equal(sufs_unlink(fs, dir, i % 3 == 2 ? "g" : "f", 1), 0);
	}
	assert_true(fs->deps->pending > 100);
	while (fs->cache.dirty || fs->deps->ndeferred) {
		n = deps_epoch(fs, NULL, NULL, 1);
		assert_true(n > 0 || !fs->cache.dirty);
		assert_int_equal(deps_check(fs, NULL, 0), 0);
		assert_true(++epochs < 100);
	}
	assert_int_equal(fs->deps->pending, 0);
	assert_int_equal(fs->deps->ndeferred, 0);
	assert_true(epochs >= 3);
}

/* ---- cycles between blocks -------------------------------------------------------------- */

static void two_blocks_waiting_for_each_other_go_out_with_parts_undone_then_whole(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t I = AREA + 20, D = AREA + 21;
	uint8_t *dsk = malloc(fs->bsize);
	struct trace tr = { .n = 0 };
	uint64_t undone0 = fs->deps->undone;
	upd_id i1, i2, d1, d2;

	assert_non_null(dsk);
	i1 = change(fs, I, 0, 8, 0x01, NULL, 0);
	d2 = change(fs, D, 0, 8, 0x02, NULL, 0);
	d1 = change(fs, D, 64, 8, 0x03, &i1, 1);         /* D waits for I ... */
	i2 = change(fs, I, 64, 8, 0x04, &d2, 1);         /* ... and I for D */
	fs->trace = trace_fn;
	fs->trace_arg = &tr;

	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 2);
	assert_int_equal(fs->deps->undone, undone0 + 2);
	disk_block(fs, I, dsk);
	assert_bytes(dsk, 0x01, 8);
	assert_bytes(dsk + 64, 0, 8);
	disk_block(fs, D, dsk);
	assert_bytes(dsk, 0x02, 8);
	assert_bytes(dsk + 64, 0, 8);
	assert_non_null(deps_find(fs, i2));
	assert_non_null(deps_find(fs, d1));

	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 2);
	disk_block(fs, I, dsk);
	assert_bytes(dsk + 64, 0x04, 8);
	disk_block(fs, D, dsk);
	assert_bytes(dsk + 64, 0x03, 8);
	assert_int_equal(tr.n, 4);
	assert_int_equal(fs->deps->pending, 0);
	assert_int_equal(fs->cache.dirty, 0);
	fs->trace = NULL;
	free(dsk);
}

/* Find an entry by name in a raw directory block; its offset or -1. */
static long raw_entry(const uint8_t *blk, uint32_t bsize, const char *name)
{
	uint32_t off = 0, len = (uint32_t)strlen(name);

	while (off < bsize - SUFS_DIR_TAIL_SIZE) {
		const uint8_t *de = blk + off;
		uint32_t reclen = get16(de + DE_RECLEN);

		if (de[DE_NAMELEN] == len && !memcmp(de + DE_NAME, name, len))
			return off;
		if (reclen < SUFS_DIRENT_HDR)
			return -1;
		off += reclen;
	}
	return -1;
}

/*
 * A new file whose name needs a new directory block, the directory's inode
 * and the file's in one inode-table block: the table block waits for the
 * new directory block (the directory's size and pointer), the directory
 * block for the table block (the entry waits for the file's inode).  Each
 * block also carries something that may go at once (the new block's
 * contents; a chmod of another inode of the table block), so the first
 * epoch writes both, each with the parts that wait undone.
 */
static void an_inode_block_and_a_directory_block_waiting_for_each_other_resolve_by_undo(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	char name[201];
	uint8_t *img = malloc(fs->bsize), *dsk = malloc(fs->bsize);
	struct trace tr = { .n = 0 };
	struct sufs_setattr sa = { 0 };
	struct sufs_inode in;
	uint32_t d, x, f, off_d, off_f, off_x;
	uint64_t T, N, epochs0;
	unsigned i, undone;
	int zero;
	long e;

	assert_non_null(img);
	assert_non_null(dsk);
	memset(name, 'n', 200);
	name[200] = 0;
	d = mkdir_(fs, SUFS_ROOT_INO, "d");
	x = mkfile(fs, d, "x");
	/* ".", "..", "x" and 19 names of 208 bytes fill the first block */
	for (i = 0; i < 19; i++) {
		name[0] = (char)('A' + i);
		assert_int_equal(sufs_link(fs, x, d, name, 200), 0);
	}
	assert_int_equal(sufs_sync(fs), 0);
	assert_int_equal(fs->deps->pending, 0);

	name[0] = 'z';
	f = mkfile(fs, d, name);
	/* and a change of x's inode that waits for nothing */
	sa.mask = SUFS_SET_MODE;
	sa.mode = 0600;
	assert_int_equal(sufs_setattr(fs, x, &sa), 0);
	T = itable_block(fs, d, &off_d);
	assert_int_equal(itable_block(fs, f, &off_f), T);
	assert_int_equal(itable_block(fs, x, &off_x), T);
	assert_int_equal(sufs_bmap(fs, d, 1, &N), 0);
	assert_int_not_equal(N, 0);

	/* the table block: x's change goes, the file's inode and the
	 * directory's size and pointer are undone */
	assert_int_equal(image(fs, T, img, &undone), 1);
	assert_int_equal(undone, 3);
	assert_true(sufs_inode_is_zero(img + off_f));
	sufs_inode_decode(img + off_d, &in);
	assert_int_equal(in.size, fs->bsize);
	assert_int_equal(in.block[1], 0);
	sufs_inode_decode(img + off_x, &in);
	assert_int_equal(in.mode, S_IFREG | 0600);
	/* the directory block: its contents go, the entry's inode number not */
	assert_int_equal(image(fs, N, img, &undone), 1);
	assert_int_equal(undone, 1);
	e = raw_entry(img, fs->bsize, name);
	assert_int_equal(e, 0);
	assert_int_equal(get32(img + e + DE_INO), 0);

	fs->trace = trace_fn;
	fs->trace_arg = &tr;
	epochs0 = fs->deps->epochs;
	assert_true(deps_epoch(fs, NULL, NULL, 1) > 0);
	assert_true(traced(&tr, T));
	assert_true(traced(&tr, N));
	disk_inode(fs, f, &in, &zero);
	assert_true(zero);
	disk_inode(fs, d, &in, &zero);
	assert_int_equal(in.size, fs->bsize);
	disk_inode(fs, x, &in, &zero);
	assert_int_equal(in.mode, S_IFREG | 0600);
	disk_block(fs, N, dsk);
	assert_int_equal(get32(dsk + DE_INO), 0);
	assert_int_equal(dsk[DE_NAMELEN], 200);
	assert_int_equal(cache_lookup(fs, T)->dirty, 1);
	assert_int_equal(cache_lookup(fs, N)->dirty, 1);

	/* then the inodes, then the entry */
	tr.n = 0;
	assert_true(deps_epoch(fs, NULL, NULL, 1) > 0);
	assert_true(traced(&tr, T));
	assert_false(traced(&tr, N));
	disk_inode(fs, f, &in, &zero);
	assert_false(zero);
	assert_int_equal(in.mode, S_IFREG | 0644);
	assert_int_equal(in.links, 1);
	disk_inode(fs, d, &in, &zero);
	assert_int_equal(in.size, 2 * fs->bsize);
	assert_int_equal(in.block[1], N);
	tr.n = 0;
	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 1);
	assert_true(traced(&tr, N));
	disk_block(fs, N, dsk);
	assert_int_equal(get32(dsk + DE_INO), f);
	assert_int_equal(fs->deps->epochs, epochs0 + 3);
	assert_int_equal(fs->deps->pending, 0);
	assert_int_equal(fs->cache.dirty, 0);
	fs->trace = NULL;
	free(img);
	free(dsk);
}

/* ---- rule 2: no reuse before the old pointers are gone on disk ------------------------- */

static void a_freed_block_or_inode_is_reused_only_after_the_old_pointer_is_cleared_on_disk(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t ob[3], nb[3], tb[3], rootblk;
	uint32_t old, new, third;
	struct sufs_inode in;
	uint8_t *dsk = malloc(fs->bsize);
	unsigned i, j, epochs = 0;
	int zero, named;
	long e;

	assert_non_null(dsk);
	old = mkfile(fs, SUFS_ROOT_INO, "old");
	write_pattern(fs, old, 0, 3 * fs->bsize, 9);
	file_blocks(fs, old, ob, 3);
	assert_int_equal(sufs_sync(fs), 0);

	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "old", 3), 0);
	assert_int_equal(fs->deps->ndeferred, 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(bit(fs, SUFS_BITMAP_BLOCK, ob[i]), 1);
	assert_int_equal(bit(fs, SUFS_BITMAP_INODE, old), 1);

	/* a new file before any write-back gets none of them */
	new = mkfile(fs, SUFS_ROOT_INO, "new");
	assert_int_not_equal(new, old);
	write_pattern(fs, new, 0, 3 * fs->bsize, 10);
	file_blocks(fs, new, nb, 3);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			assert_int_not_equal(nb[i], ob[j]);

	/* epoch by epoch: the bits stay set until the zeroed inode is on disk
	 * and the name is gone from the disk */
	assert_int_equal(sufs_bmap(fs, SUFS_ROOT_INO, 0, &rootblk), 0);
	while (fs->deps->ndeferred) {
		assert_true(deps_epoch(fs, NULL, NULL, 1) > 0);
		epochs++;
		disk_inode(fs, old, &in, &zero);
		disk_block(fs, rootblk, dsk);
		e = raw_entry(dsk, fs->bsize, "old");
		named = e >= 0 && get32(dsk + e + DE_INO) == old;
		for (i = 0; i < 3; i++)
			assert_int_equal(bit(fs, SUFS_BITMAP_BLOCK, ob[i]),
					 fs->deps->ndeferred ? 1 : 0);
		assert_int_equal(bit(fs, SUFS_BITMAP_INODE, old), fs->deps->ndeferred ? 1 : 0);
		if (!fs->deps->ndeferred) {
			assert_true(zero);
			assert_false(named);
		}
		assert_true(epochs < 10);
	}
	assert_int_equal(epochs, 2);   /* the name, then the inode */
	settle(fs);
	for (i = 0; i < 3; i++)
		assert_int_equal(bit(fs, SUFS_BITMAP_BLOCK, ob[i]), 0);
	tu_assert_summaries(fs);

	/* free now: the next file takes the lowest number and blocks again */
	third = mkfile(fs, SUFS_ROOT_INO, "third");
	assert_int_equal(third, old);
	write_pattern(fs, third, 0, 3 * fs->bsize, 11);
	file_blocks(fs, third, tb, 3);
	assert_int_equal(tb[0], ob[0]);
	free(dsk);
}

static void blocks_cut_by_truncate_are_reused_only_after_the_cut_is_on_disk(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	enum { NB = 40 };
	uint64_t cut[NB], other[NB];
	uint32_t f, g;
	unsigned i, j;
	uint64_t free0;

	f = mkfile(fs, SUFS_ROOT_INO, "f");
	write_pattern(fs, f, 0, NB * fs->bsize, 12);    /* direct and single indirect */
	file_blocks(fs, f, cut, NB);
	assert_int_equal(sufs_sync(fs), 0);
	free0 = sufs_get_super(fs)->free_blocks;

	assert_int_equal(sufs_truncate(fs, f, 100), 0);
	assert_int_equal(fs->deps->ndeferred, 1);
	assert_int_equal(sufs_get_super(fs)->free_blocks, free0);
	g = mkfile(fs, SUFS_ROOT_INO, "g");
	write_pattern(fs, g, 0, NB * fs->bsize, 13);
	file_blocks(fs, g, other, NB);
	for (i = 1; i < NB; i++)
		for (j = 0; j < NB; j++)
			assert_int_not_equal(cut[i], other[j]);
	assert_int_equal(sufs_sync(fs), 0);
	assert_int_equal(fs->deps->ndeferred, 0);
	for (i = 1; i < NB; i++)
		assert_int_equal(bit(fs, SUFS_BITMAP_BLOCK, cut[i]), 0);
	/* 39 data blocks and the indirect block came back; g took 41 */
	assert_int_equal(sufs_get_super(fs)->free_blocks, free0 + 40 - 41);
	tu_assert_summaries(fs);
}

/* ---- deferred work and barriers ------------------------------------------------------------ */

static int count_fn(struct sufs_fs *fs, void *arg)
{
	int *n = arg;

	if (fs)
		n[0]++;
	else
		n[1]++;   /* dropped: the file system went away first */
	return 0;
}

static void deferred_work_runs_only_after_the_barrier_that_puts_its_updates_on_disk(
	void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	int runs[2] = { 0, 0 };
	upd_id a, gone = 0;

	a = change(fs, AREA, 0, 8, 0x5a, NULL, 0);
	assert_int_equal(deps_defer(fs, &a, 1, count_fn, runs), 0);
	assert_int_equal(fs->deps->ndeferred, 1);
	assert_int_equal(runs[0], 0);
	/* an epoch that writes nothing of it */
	assert_int_equal(deps_epoch(fs, want_none, NULL, 1), 0);
	assert_int_equal(runs[0], 0);
	assert_int_equal(deps_epoch(fs, NULL, NULL, 1), 1);
	assert_int_equal(runs[0], 1);
	assert_int_equal(fs->deps->ndeferred, 0);

	/* nothing pending to wait for: at once */
	assert_int_equal(deps_defer(fs, &a, 1, count_fn, runs), 0);
	assert_int_equal(deps_defer(fs, &gone, 1, count_fn, runs), 0);
	assert_int_equal(runs[0], 3);
	assert_int_equal(fs->deps->ndeferred, 0);

	/* still waiting when the file system is dropped: dropped, not run */
	a = change(fs, AREA, 0, 8, 0x5b, NULL, 0);
	assert_int_equal(deps_defer(fs, &a, 1, count_fn, runs), 0);
	sufs_abandon(fs);
	t->fs = NULL;
	assert_int_equal(runs[0], 3);
	assert_int_equal(runs[1], 1);
}

static void a_failed_barrier_leaves_its_updates_pending_and_their_blocks_dirty(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	uint8_t *dsk;
	upd_id a, b;

	open_recorded(t, &r);
	dsk = malloc(t->fs->bsize);
	assert_non_null(dsk);
	a = change(t->fs, AREA, 0, 8, 0x61, NULL, 0);
	b = change(t->fs, AREA + 1, 0, 8, 0x62, &a, 1);
	r.fail_barriers = 1;
	assert_int_equal(deps_epoch(t->fs, NULL, NULL, 1), -EIO);
	/* written, but not known to be on disk: still pending, still dirty */
	assert_non_null(deps_find(t->fs, a));
	assert_non_null(deps_find(t->fs, b));
	assert_int_equal(cache_lookup(t->fs, AREA)->dirty, 1);
	assert_int_equal(deps_check(t->fs, NULL, 0), 0);

	r.fail_barriers = 0;
	r.n = 0;
	settle(t->fs);
	assert_true(rec_wrote(&r, 0, AREA));
	assert_true(rec_wrote(&r, 0, AREA + 1));
	disk_block(t->fs, AREA + 1, dsk);
	assert_bytes(dsk, 0x62, 8);
	free(dsk);
}

/* A write that fails leaves every update of the epoch pending and none in
 * flight: those of the blocks written before it, and those of the blocks
 * it carried; a later epoch writes them all. */
static void a_failed_write_leaves_no_update_in_flight(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	uint8_t *dsk;
	upd_id a, b, c;
	uint64_t barriers;

	open_recorded(t, &r);
	dsk = malloc(t->fs->bsize);
	assert_non_null(dsk);
	/* two runs: AREA and AREA + 1 together, then AREA + 3 */
	a = change(t->fs, AREA, 0, 8, 0x71, NULL, 0);
	b = change(t->fs, AREA + 1, 0, 8, 0x72, NULL, 0);
	c = change(t->fs, AREA + 3, 0, 8, 0x73, NULL, 0);
	r.fail_writes = 1;
	barriers = r.barriers;
	assert_int_equal(deps_epoch(t->fs, NULL, NULL, 1), -EIO);
	assert_int_equal(r.barriers, barriers);
	assert_non_null(deps_find(t->fs, a));
	assert_non_null(deps_find(t->fs, b));
	assert_non_null(deps_find(t->fs, c));
	assert_false(deps_find(t->fs, a)->inflight);
	assert_false(deps_find(t->fs, b)->inflight);
	assert_false(deps_find(t->fs, c)->inflight);
	assert_int_equal(cache_lookup(t->fs, AREA)->dirty, 1);
	assert_int_equal(cache_lookup(t->fs, AREA + 1)->dirty, 1);
	assert_int_equal(deps_check(t->fs, NULL, 0), 0);

	/* the first write fails: the run it carried is not in flight either */
	r.fail_writes = 0;
	assert_int_equal(deps_epoch(t->fs, NULL, NULL, 1), -EIO);
	assert_false(deps_find(t->fs, a)->inflight);
	assert_false(deps_find(t->fs, b)->inflight);

	r.fail_writes = -1;
	settle(t->fs);
	assert_null(deps_find(t->fs, c));
	disk_block(t->fs, AREA + 3, dsk);
	assert_bytes(dsk, 0x73, 8);
	free(dsk);
}

static void a_block_goes_out_only_after_a_barrier_has_followed_what_it_waits_for(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	size_t i, first_b = SIZE_MAX, last_a = 0;
	upd_id a;

	open_recorded(t, &r);
	a = change(t->fs, AREA, 0, 8, 0x71, NULL, 0);
	change(t->fs, AREA + 1, 0, 8, 0x72, &a, 1);
	settle(t->fs);
	/* the dependent block was written only after a barrier that followed
	 * the write of what it waited for */
	for (i = 0; i < r.n; i++) {
		if (r.log[i].blk == AREA)
			last_a = i;
		if (r.log[i].blk == AREA + 1 && first_b == SIZE_MAX)
			first_b = i;
	}
	assert_true(first_b != SIZE_MAX);
	assert_true(r.log[first_b].epoch > r.log[last_a].epoch);
}

/* ---- flushing a chosen set, fsync ----------------------------------------------------- */

static void flush_set_writes_what_the_set_waits_for_first_and_nothing_else(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t A = AREA + 30, B = AREA + 31, C = AREA + 32;
	struct trace tr = { .n = 0 };
	upd_id a, b, c, *ids = malloc(sizeof(*ids));

	assert_non_null(ids);
	a = change(fs, A, 0, 8, 0x81, NULL, 0);
	b = change(fs, B, 0, 8, 0x82, &a, 1);
	c = change(fs, C, 0, 8, 0x83, NULL, 0);
	fs->trace = trace_fn;
	fs->trace_arg = &tr;
	ids[0] = b;
	assert_int_equal(deps_flush_set(fs, ids, 1), 0);
	fs->trace = NULL;
	assert_int_equal(tr.n, 2);
	assert_int_equal(tr.blk[0], A);
	assert_int_equal(tr.blk[1], B);
	assert_null(deps_find(fs, a));
	assert_null(deps_find(fs, b));
	assert_non_null(deps_find(fs, c));
	assert_int_equal(cache_lookup(fs, C)->dirty, 1);
	assert_int_equal(fs->deps->pending, 1);
	settle(fs);
}

/* Each update joins the closure once, however many paths lead to it: a
 * lattice of 48 levels, each of two updates (on two blocks, the levels on
 * two pairs of blocks in turn) waiting for both of the level before, has
 * 2^48 paths from its top but 96 updates (counting paths, one fsync once
 * sorted 85 million ids). */
static void flush_set_takes_each_update_once_however_many_paths_lead_to_it(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t A = AREA + 33;
	upd_id prev[2] = { 0, 0 }, cur[2], *ids = malloc(2 * sizeof(*ids));
	unsigned level, k;

	assert_non_null(ids);
	for (level = 0; level < 48; level++) {
		for (k = 0; k < 2; k++)
			cur[k] = change(fs, A + 2 * (level % 2) + k, 8 * level, 8,
					(uint8_t)(level + 1), prev, level ? 2 : 0);
		prev[0] = cur[0];
		prev[1] = cur[1];
	}
	assert_int_equal(fs->deps->pending, 96);
	memcpy(ids, cur, sizeof(cur));
	assert_int_equal(deps_flush_set(fs, ids, 2), 0);
	assert_int_equal(fs->deps->pending, 0);
	settle(fs);
}

struct blocks {
	uint64_t blk[256];
	unsigned n;
};

static int blocks_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		     int bad, void *arg)
{
	struct blocks *b = arg;

	(void)fs;
	(void)ino;
	(void)lblk;
	(void)level;
	assert_int_equal(bad, 0);
	assert_true(b->n < 256);
	b->blk[b->n++] = pblk;
	return 0;
}

static void add_block(struct blocks *b, uint64_t blk)
{
	assert_true(b->n < 256);
	b->blk[b->n++] = blk;
}

static int in_blocks(const struct blocks *b, uint64_t blk)
{
	unsigned i;

	for (i = 0; i < b->n; i++)
		if (b->blk[i] == blk)
			return 1;
	return 0;
}

/* No block of b from the first on reached the disk in r's log: what is
 * named in the failure. */
static void assert_not_written(const struct rec *r, const struct blocks *b, unsigned first,
			       const char *what)
{
	unsigned i;

	for (i = first; i < b->n; i++)
		if (rec_wrote(r, 0, b->blk[i]))
			fail_msg("block %llu %s was written", (unsigned long long)b->blk[i], what);
}

/* Every block of b is free in the bitmap. */
static void assert_blocks_free(struct sufs_fs *fs, const struct blocks *b)
{
	unsigned i;
	int set;

	for (i = 0; i < b->n; i++) {
		assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, b->blk[i], &set), 0);
		if (set)
			fail_msg("block %llu is still in use", (unsigned long long)b->blk[i]);
	}
}

static void fsync_makes_the_file_and_its_names_durable_and_writes_nothing_else(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	struct sufs_fs *fs;
	struct blocks need = { .n = 0 }, other = { .n = 0 }, ok;
	const struct sufs_super *sb;
	struct sufs_group_layout l;
	uint32_t p, q, x, rd, y, ino;
	uint64_t blk;
	size_t i;

	open_recorded(t, &r);
	fs = t->fs;
	p = mkdir_(fs, SUFS_ROOT_INO, "p");
	q = mkdir_(fs, p, "q");
	x = mkfile(fs, q, "x");
	write_pattern(fs, x, 0, 20 * fs->bsize + 10, 7);    /* single indirect too */
	rd = mkdir_(fs, SUFS_ROOT_INO, "r");
	y = mkfile(fs, rd, "y");
	write_pattern(fs, y, 0, 5 * fs->bsize, 8);

	/* what must reach the disk: x's blocks, the inodes of x and the
	 * directories above it, and the directory blocks naming them */
	assert_int_equal(sufs_block_iterate(fs, x, blocks_fn, &need), 0);
	assert_int_equal(need.n, 22);
	add_block(&need, itable_block(fs, x, NULL));
	add_block(&need, itable_block(fs, q, NULL));
	add_block(&need, itable_block(fs, p, NULL));
	add_block(&need, itable_block(fs, SUFS_ROOT_INO, NULL));
	assert_int_equal(sufs_bmap(fs, q, 0, &blk), 0);
	add_block(&need, blk);
	assert_int_equal(sufs_bmap(fs, p, 0, &blk), 0);
	add_block(&need, blk);
	assert_int_equal(sufs_bmap(fs, SUFS_ROOT_INO, 0, &blk), 0);
	add_block(&need, blk);
	assert_int_equal(sufs_block_iterate(fs, y, blocks_fn, &other), 0);
	assert_int_equal(sufs_bmap(fs, rd, 0, &blk), 0);
	add_block(&other, blk);

	r.n = 0;
	assert_int_equal(sufs_fsync(fs, x), 0);
	for (i = 0; i < need.n; i++)
		if (!rec_wrote(&r, 0, need.blk[i]))
			fail_msg("block %llu that x needs was not written",
				 (unsigned long long)need.blk[i]);
	for (i = 0; i < other.n; i++)
		if (rec_wrote(&r, 0, other.blk[i]))
			fail_msg("block %llu of %s was written", (unsigned long long)other.blk[i],
				 i + 1 == other.n ? "directory r" : "file y");
	/* and nothing beyond what x needs and the bitmaps its blocks wait for */
	ok = need;
	sb = sufs_get_super(fs);
	sufs_group_layout(sb, 0, &l);
	add_block(&ok, l.block_bitmap);
	add_block(&ok, l.inode_bitmap);
	for (i = 0; i < r.n; i++)
		if (!in_blocks(&ok, r.log[i].blk))
			fail_msg("fsync wrote block %llu, which x does not need",
				 (unsigned long long)r.log[i].blk);

	crash_and_reopen(t);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/p/q/x", 0, &ino), 0);
	assert_int_equal(ino, x);
	assert_file(t->fs, x, 20 * t->fs->bsize + 10, 7);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "r", 1, &ino), -ENOENT);
}

/*
 * A file removed before its inode ever reached the disk is forgotten: its
 * data is never written, and its blocks and inode number are free at
 * once.  So is one renamed before it went, though its old name's removal
 * waits for the new name (the old name is forgotten with it, the removal
 * over it undone to no name), and one whose name another file's rename
 * took (that name, undone, shows no name either).
 */
static void a_file_removed_before_it_reached_the_disk_is_never_written(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	struct sufs_fs *fs;
	struct blocks x_blocks = { .n = 0 }, reused = { .n = 0 }, z_blocks = { .n = 0 };
	uint32_t d, x, y, z, v, w, ino;
	uint64_t forgotten;
	size_t i;
	int set;

	open_recorded(t, &r);
	fs = t->fs;
	d = mkdir_(fs, SUFS_ROOT_INO, "d");
	assert_int_equal(sufs_sync(fs), 0);
	forgotten = fs->deps->forgotten;

	x = mkfile(fs, d, "x");
	write_pattern(fs, x, 0, 20 * fs->bsize + 10, 3);    /* single indirect too */
	assert_int_equal(sufs_link(fs, x, SUFS_ROOT_INO, "x2", 2), 0);
	assert_int_equal(sufs_block_iterate(fs, x, blocks_fn, &x_blocks), 0);
	assert_int_equal(x_blocks.n, 22);
	assert_int_equal(sufs_unlink(fs, d, "x", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten);     /* a name is left */
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "x2", 2), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 1);
	assert_blocks_free(fs, &x_blocks);
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, x, &set), 0);
	assert_false(set);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* the next file gets them */
	y = mkfile(fs, d, "y");
	assert_int_equal(y, x);
	write_pattern(fs, y, 0, fs->bsize, 4);
	assert_int_equal(sufs_block_iterate(fs, y, blocks_fn, &reused), 0);
	assert_true(in_blocks(&x_blocks, reused.blk[0]));

	/* renamed to another directory, then removed: forgotten, its old
	 * name with it, though that name's removal waited for the new name */
	z = mkfile(fs, SUFS_ROOT_INO, "z");
	write_pattern(fs, z, 0, 2 * fs->bsize, 5);
	assert_int_equal(sufs_block_iterate(fs, z, blocks_fn, &z_blocks), 0);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "z", 1, d, "z", 1), 0);
	assert_int_equal(sufs_unlink(fs, d, "z", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 2);
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, z, &set), 0);
	assert_false(set);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* its name taken by another file's rename: forgotten, and the name
	 * shows the other file or nothing */
	v = mkfile(fs, d, "v");
	write_pattern(fs, v, 0, fs->bsize, 6);
	assert_int_equal(sufs_block_iterate(fs, v, blocks_fn, &z_blocks), 0);
	w = mkfile(fs, SUFS_ROOT_INO, "w");
	write_pattern(fs, w, 0, fs->bsize, 7);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "w", 1, d, "v", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 3);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	r.n = 0;
	assert_int_equal(sufs_sync(fs), 0);
	/* a block of theirs that was written is another's now: a file's
	 * (y and w took some) or a directory's */
	for (i = 0; i < x_blocks.n + z_blocks.n; i++) {
		uint64_t blk = i < x_blocks.n ? x_blocks.blk[i] : z_blocks.blk[i - x_blocks.n];
		assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, blk, &set), 0);
		if (rec_wrote(&r, 0, blk) && !set)
			fail_msg("block %llu of a forgotten file was written", (unsigned long long)blk);
	}
	crash_and_reopen(t);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/d/y", 0, &ino), 0);
	assert_file(t->fs, ino, t->fs->bsize, 4);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/x2", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/d/z", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/w", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/d/v", 0, &ino), 0);
	assert_file(t->fs, ino, t->fs->bsize, 7);
}

/*
 * A file renamed over another's name, then renamed away and removed,
 * before any of it reached the disk, is forgotten too.  The name it took
 * was stored whole (an entry's header, 8 bytes), and the removal that took
 * it away changes only the entry's inode number (4): the rest of that
 * header stays as it is, naming nothing without a number.  (Forgetting
 * once asked for newer updates over every byte of the name: this file's
 * data was written, though free at the end; 4% of the writes of
 * bench/drain's file mix of 8,000 transactions.)
 */
static void a_file_renamed_over_a_name_then_away_and_removed_is_never_written(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	struct sufs_fs *fs;
	struct blocks y_blocks = { .n = 0 };
	uint32_t a, b, c, y, ino;
	uint64_t forgotten;
	int set;

	open_recorded(t, &r);
	fs = t->fs;
	a = mkdir_(fs, SUFS_ROOT_INO, "a");
	b = mkdir_(fs, SUFS_ROOT_INO, "b");
	c = mkdir_(fs, SUFS_ROOT_INO, "c");
	assert_int_equal(sufs_sync(fs), 0);
	forgotten = fs->deps->forgotten;

	write_pattern(fs, mkfile(fs, a, "x"), 0, 2 * fs->bsize, 1);
	y = mkfile(fs, c, "y");
	write_pattern(fs, y, 0, 2 * fs->bsize, 2);
	assert_int_equal(sufs_block_iterate(fs, y, blocks_fn, &y_blocks), 0);
	assert_int_equal(sufs_rename(fs, c, "y", 1, a, "x", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 1);   /* x, under y */
	assert_int_equal(sufs_rename(fs, a, "x", 1, b, "z", 1), 0);
	assert_int_equal(sufs_unlink(fs, b, "z", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 2);   /* y */
	assert_blocks_free(fs, &y_blocks);
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, y, &set), 0);
	assert_false(set);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	r.n = 0;
	assert_int_equal(sufs_sync(fs), 0);
	assert_not_written(&r, &y_blocks, 0, "of a forgotten file");
	crash_and_reopen(t);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/a/x", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/b/z", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/c/y", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/a", 0, &ino), 0);
}

/*
 * A file whose inode is on disk, removed before its newer blocks reached
 * it: the pointers to them are taken back, and the blocks, which no
 * pointer on disk ever named, are free at once and never written; a
 * block on disk stays until the zeroed inode is.  A pointer a truncate
 * changed (its free waits for the change) leaves the file to the rules.
 */
static void a_removed_files_blocks_not_yet_on_disk_are_freed_at_once(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	struct sufs_setattr sa = { .mask = SUFS_SET_SIZE, .size = 0 };
	struct sufs_fs *fs;
	struct blocks x_blocks = { .n = 0 }, y_blocks = { .n = 0 }, z_blocks = { .n = 0 };
	uint32_t x, y, z, ino;
	uint64_t forgotten;
	size_t i;
	int set;

	open_recorded(t, &r);
	fs = t->fs;
	x = mkfile(fs, SUFS_ROOT_INO, "x");
	y = mkfile(fs, SUFS_ROOT_INO, "y");
	z = mkfile(fs, SUFS_ROOT_INO, "z");
	write_pattern(fs, y, 0, fs->bsize, 1);
	write_pattern(fs, z, 0, 2 * fs->bsize, 2);
	assert_int_equal(sufs_sync(fs), 0);
	forgotten = fs->deps->forgotten;

	/* x: empty on disk, then 20 blocks and an indirect one; y: one block
	 * on disk, two appended; z: truncated (its frees wait for the cleared
	 * pointers) and written again */
	write_pattern(fs, x, 0, 20 * fs->bsize + 10, 3);
	assert_int_equal(sufs_block_iterate(fs, x, blocks_fn, &x_blocks), 0);
	assert_int_equal(x_blocks.n, 22);
	write_pattern(fs, y, fs->bsize, 2 * fs->bsize, 4);
	assert_int_equal(sufs_block_iterate(fs, y, blocks_fn, &y_blocks), 0);
	assert_int_equal(y_blocks.n, 3);
	assert_int_equal(sufs_setattr(fs, z, &sa), 0);
	write_pattern(fs, z, 0, fs->bsize, 5);
	assert_int_equal(sufs_block_iterate(fs, z, blocks_fn, &z_blocks), 0);

	/* x's blocks go at once; its number waits for the zeroed inode */
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "x", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 1);
	assert_blocks_free(fs, &x_blocks);
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, x, &set), 0);
	assert_true(set);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* y's two new blocks go at once, the one on disk waits */
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "y", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 2);
	for (i = 0; i < y_blocks.n; i++) {
		assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, y_blocks.blk[i], &set), 0);
		assert_int_equal(set, i == 0);
	}
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	/* z: nothing taken back */
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "z", 1), 0);
	assert_int_equal(fs->deps->forgotten, forgotten + 2);
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, z_blocks.blk[0], &set), 0);
	assert_true(set);
	assert_int_equal(deps_check(fs, NULL, 0), 0);

	r.n = 0;
	assert_int_equal(sufs_sync(fs), 0);
	assert_not_written(&r, &x_blocks, 0, "of a removed file");
	assert_not_written(&r, &y_blocks, 1, "appended to a removed file");
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, y_blocks.blk[0], &set), 0);
	assert_false(set);
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, x, &set), 0);
	assert_false(set);
	crash_and_reopen(t);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/x", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/y", 0, &ino), -ENOENT);
	assert_int_equal(sufs_namei(t->fs, SUFS_ROOT_INO, "/z", 0, &ino), -ENOENT);
}

/*
 * Forgetting finds an inode's updates through its block's spans when every
 * update of the block may be undone, and by walking the block's updates
 * when one may not (a change of another inode there that waited for
 * nothing): the file is forgotten either way, and nothing of it is left.
 */
static void a_file_is_forgotten_whether_or_not_its_inode_block_holds_a_change_never_undone(
	void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	struct sufs_group_layout l;
	struct sufs_inode in;
	struct buf *b;
	uint32_t d, x, ipb = fs->inodes_per_block, ipg = fs->sb.inodes_per_group;
	uint64_t forgotten, blk;
	int pass, set;

	d = mkdir_(fs, SUFS_ROOT_INO, "d");
	assert_int_equal(sufs_sync(fs), 0);
	for (pass = 0; pass < 2; pass++) {
		if (pass) {
			assert_int_equal(sufs_inode_get(fs, d, &in), 0);
			in.uid++;
			assert_int_equal(sufs_inode_put(fs, d, &in), 0);
		}
		forgotten = fs->deps->forgotten;
		x = mkfile(fs, d, "x");
		write_pattern(fs, x, 0, 3 * fs->bsize, 9);
		assert_int_equal((x - 1) / ipb, (d - 1) / ipb); /* one inode block */
		sufs_group_layout(&fs->sb, (x - 1) / ipg, &l);
		blk = l.inode_table + (x - 1) % ipg / ipb;
		assert_int_equal(buf_get(fs, blk, BUF_ITABLE, &b), 0);
		if (pass)
			assert_true(bd(b)->nupds > bd(b)->nundo);   /* the list is walked */
		else
			assert_int_equal(bd(b)->nupds, bd(b)->nundo); /* the spans lead */
		buf_put(fs, b);
		assert_int_equal(sufs_unlink(fs, d, "x", 1), 0);
		assert_int_equal(fs->deps->forgotten, forgotten + 1);
		assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, x, &set), 0);
		assert_false(set);
		assert_int_equal(deps_check(fs, NULL, 0), 0);
	}
	assert_int_equal(sufs_sync(fs), 0);
	assert_int_equal(sufs_inode_get(fs, d, &in), 0);
	assert_int_equal(in.links, 2);
}

/*
 * rm -rf of a deep tree that is on disk, then sync: the names go first,
 * then the inodes, then the bitmaps, and each block is written once
 * (the superblock and group descriptors aside, which sync writes last).
 * A directory's ".." link waits for its name, not its inode, so the
 * levels do not chain (waiting for the inode, the inode block is written
 * once per level).
 */
static void removing_a_deep_tree_writes_each_block_once_in_a_sync(void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	struct sufs_fs *fs;
	uint32_t dir[8];
	char name[8];
	size_t i, j;
	int lvl, f;

	open_recorded(t, &r);
	fs = t->fs;
	dir[0] = SUFS_ROOT_INO;
	for (lvl = 1; lvl < 8; lvl++) {
		dir[lvl] = mkdir_(fs, dir[lvl - 1], "d");
		for (f = 0; f < 3; f++) {
			snprintf(name, sizeof(name), "f%d", f);
			write_pattern(fs, mkfile(fs, dir[lvl], name), 0, fs->bsize, (uint32_t)(lvl * 3 + f));
		}
	}
	assert_int_equal(sufs_sync(fs), 0);
	for (lvl = 7; lvl >= 1; lvl--) {
		for (f = 0; f < 3; f++) {
			snprintf(name, sizeof(name), "f%d", f);
			assert_int_equal(sufs_unlink(fs, dir[lvl], name, 2), 0);
		}
		assert_int_equal(sufs_rmdir(fs, dir[lvl - 1], "d", 1), 0);
	}
	r.n = 0;
	assert_int_equal(sufs_sync(fs), 0);
	assert_true(r.n > 0);
	for (i = 0; i < r.n; i++) {
		if (r.log[i].blk <= 1)
			continue; /* superblock, group descriptors */
		for (j = i + 1; j < r.n; j++)
			if (r.log[j].blk == r.log[i].blk)
				fail_msg("block %llu was written twice (writes %zu and %zu of %zu)",
					 (unsigned long long)r.log[i].blk, i, j, r.n);
	}
	assert_int_equal(deps_check(fs, NULL, 0), 0);
}

/*
 * A new directory block carries its header, which the directory's pointer
 * waits for, and names, which wait for their new inodes and for that
 * pointer (a name is on disk once it is reachable: doc/CRASH.md, 13).  A
 * sync writes it twice: first with the names undone, for the pointer's
 * sake, then, after the pointer, with them; never a third time.
 */
static void a_sync_writes_a_new_directory_block_before_its_pointer_and_with_its_names_after(
	void **state)
{
	struct tfs *t = *state;
	static struct rec r;
	struct sufs_fs *fs;
	struct sufs_stat st;
	uint64_t blk;
	uint32_t d;
	char name[32];
	size_t i, writes = 0;
	unsigned f;

	open_recorded(t, &r);
	fs = t->fs;
	d = mkdir_(fs, SUFS_ROOT_INO, "d");
	assert_int_equal(sufs_sync(fs), 0);
	r.n = 0;
	for (f = 0; ; f++) {
		assert_int_equal(sufs_stat(fs, d, &st), 0);
		if (st.size > fs->bsize)
			break;
		snprintf(name, sizeof(name), "a-name-of-twenty-%03u", f);
		mkfile(fs, d, name);
	}
	assert_int_equal(sufs_bmap(fs, d, 1, &blk), 0);
	assert_int_not_equal(blk, 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(sufs_sync(fs), 0);
	for (i = 0; i < r.n; i++)
		writes += r.log[i].blk == blk;
	assert_int_equal(writes, 2);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
}

/* ---- write modes ----------------------------------------------------------------------- */

/* Operations of every kind; check(fs, what) after each. */
static void every_kind_of_operation(struct sufs_fs *fs,
				    void (*check)(struct sufs_fs *, const char *))
{
	uint32_t a, b, f, g, ino;

	a = mkdir_(fs, SUFS_ROOT_INO, "a");
	check(fs, "mkdir /a");
	b = mkdir_(fs, a, "b");
	check(fs, "mkdir /a/b");
	f = mkfile(fs, b, "f");
	check(fs, "create /a/b/f");
	write_pattern(fs, f, 0, 70000, 20);       /* new blocks, single indirect */
	check(fs, "write /a/b/f");
	write_pattern(fs, f, 100, 50, 21);        /* an overwrite */
	check(fs, "overwrite /a/b/f");
	g = mkfile(fs, SUFS_ROOT_INO, "g");
	check(fs, "create /g");
	assert_int_equal(sufs_link(fs, g, a, "g2", 2), 0);
	check(fs, "link /g /a/g2");
	assert_int_equal(sufs_symlink(fs, a, "s", 1, long_target(), NULL, &ino), 0);
	check(fs, "symlink /a/s");
	assert_int_equal(sufs_rename(fs, b, "f", 1, SUFS_ROOT_INO, "f", 1), 0);
	check(fs, "rename /a/b/f /f");
	assert_int_equal(sufs_rename(fs, a, "b", 1, SUFS_ROOT_INO, "b", 1), 0);
	check(fs, "rename /a/b /b");
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, "g", 1), 0);
	check(fs, "rename /f /g (over /g)");
	assert_int_equal(sufs_truncate(fs, f, 5000), 0);
	check(fs, "truncate /g");
	assert_int_equal(sufs_unlink(fs, a, "g2", 2), 0);
	check(fs, "unlink /a/g2");
	assert_int_equal(sufs_unlink(fs, a, "s", 1), 0);
	check(fs, "unlink /a/s");
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "b", 1), 0);
	check(fs, "rmdir /b");
	assert_int_equal(sufs_fsync(fs, f), 0);
	check(fs, "fsync /g");
}

/* The tree every_kind_of_operation() leaves. */
static void assert_its_result(struct sufs_fs *fs)
{
	uint32_t a, f, ino;
	struct sufs_stat st;
	uint8_t buf[5000], want[5000];
	size_t done;

	a = lookup(fs, SUFS_ROOT_INO, "a");
	f = lookup(fs, SUFS_ROOT_INO, "g");
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "f", 1, &ino), -ENOENT);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "b", 1, &ino), -ENOENT);
	assert_int_equal(sufs_lookup(fs, a, "g2", 2, &ino), -ENOENT);
	assert_int_equal(sufs_lookup(fs, a, "s", 1, &ino), -ENOENT);
	assert_int_equal(sufs_stat(fs, f, &st), 0);
	assert_int_equal(st.size, 5000);
	assert_int_equal(st.links, 1);
	assert_int_equal(sufs_read(fs, f, 0, buf, sizeof(buf), &done), 0);
	assert_int_equal(done, 5000);
	tu_pattern_fill(want, sizeof(want), 20, 0);
	tu_pattern_fill(want + 100, 50, 21, 100);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(sufs_stat(fs, a, &st), 0);
	assert_int_equal(st.links, 2);
	assert_int_equal(sufs_stat(fs, SUFS_ROOT_INO, &st), 0);
	assert_int_equal(st.links, 3);
}

static void only_data_is_pending(struct sufs_fs *fs, const char *what)
{
	const char *kind;
	unsigned n = pending_ordered(fs, &kind);

	if (n || fs->deps->ndeferred)
		fail_msg("after %s: %u ordered updates (%s) and %llu deferred works pending", what,
			 n, kind, (unsigned long long)fs->deps->ndeferred);
	assert_int_equal(deps_check(fs, NULL, 0), 0);
}

static void in_sync_mode_every_operation_leaves_nothing_but_data_pending(void **state)
{
	struct tfs *t = *state;
	uint64_t barriers;

	assert_int_equal(sufs_set_mode(t->fs, SUFS_MODE_SYNC), 0);
	barriers = t->fs->dev->barriers;
	every_kind_of_operation(t->fs, only_data_is_pending);
	assert_true(t->fs->dev->barriers >= barriers + 16);
	/* each operation was on disk when it returned */
	crash_and_reopen(t);
	assert_its_result(t->fs);
}

static void nothing_is_recorded(struct sufs_fs *fs, const char *what)
{
	struct sufs_stats st;

	(void)what;
	sufs_get_stats(fs, &st);
	assert_int_equal(st.updates, 0);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.deferred, 0);
}

static void in_async_mode_no_update_is_recorded_and_a_sync_is_one_barrier(void **state)
{
	struct tfs *t = *state;
	uint64_t barriers;

	assert_int_equal(sufs_set_mode(t->fs, SUFS_MODE_ASYNC), 0);
	barriers = t->fs->dev->barriers;
	every_kind_of_operation(t->fs, nothing_is_recorded);
	/* fsync in async mode is a sync: one barrier so far */
	assert_int_equal(t->fs->dev->barriers, barriers + 1);
	write_pattern(t->fs, lookup(t->fs, SUFS_ROOT_INO, "g"), 100, 50, 21);
	assert_int_equal(t->fs->dev->barriers, barriers + 1);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(t->fs->dev->barriers, barriers + 2);
	nothing_is_recorded(t->fs, "sync");
	crash_and_reopen(t);
	assert_its_result(t->fs);
}

static void in_softdep_mode_nothing_is_written_until_a_limit_or_a_sync_asks(void **state)
{
	struct tfs *t = *state;
	uint64_t writes, barriers;
	uint32_t ino;

	/* the defaults, fresh from opening: a 30 s age limit, half the cache */
	tu_reopen(t, SUFS_OPEN_RDWR);
	sufs_set_clock(t->fs, NOW_SEC, 0);
	writes = t->fs->dev->writes;
	barriers = t->fs->dev->barriers;
	ino = mkfile(t->fs, SUFS_ROOT_INO, "a");
	write_pattern(t->fs, ino, 0, 10000, 1);
	mkdir_(t->fs, SUFS_ROOT_INO, "b");
	if (t->fs->dev->writes != writes || t->fs->dev->barriers != barriers)
		fail_msg("%llu writes and %llu barriers right after opening, with nothing old "
			 "and the cache nearly empty",
			 (unsigned long long)(t->fs->dev->writes - writes),
			 (unsigned long long)(t->fs->dev->barriers - barriers));
	assert_true(t->fs->deps->pending > 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_true(t->fs->dev->writes > writes);
}

/* ---- crashes -------------------------------------------------------------------------------- */

/*
 * The workload the crash test replays.  Step by step (E: one epoch after
 * it), with a sync half-way, an fsync, and a clean close at the end:
 *
 *   1 mkdir /a E         2 mkdir /a/b         3 /a/f, 6 KiB E
 *   4 /a/b/g, a few bytes and some at 200 KiB (double indirect) E
 *   5 symlink /a/s (a block) E                6 /big, 40 KiB E E
 *   7 sync
 *   8 rename /a/f /a/b/f2 E                   9 rename /a/b /c E
 *  10 link /c/f2 /a/hard                     11 unlink /a/s E
 *  12 /big: 4 KiB more (in its indirect block) E, truncated to 5 KiB E,
 *     3000 bytes more (direct blocks) E
 *  13 /a/t, 2 KiB E
 *  14 rename /a/t /c/g (over g) E            15 mkdir /d /d/e E
 *  16 rmdir /d/e E                           17 /d/n, 3000 bytes, fsync
 *  18 unlink /a/hard E                       19 rename /d /a/d2 E
 *  20 write /c/f2 at 16.6 MiB (triple indirect) E
 *  21 truncate /c/f2 3073 E                  22 rename /c/f2 /c/f3
 *  23 close
 */
#define STEPS 24

struct marks {
	uint64_t step[STEPS];      /* barriers passed when each step began */
	uint64_t synced;           /* ... when the sync of step 7 returned */
	uint64_t fsynced;          /* ... when the fsync of step 17 returned */
	uint64_t end;              /* ... after the close */
	uint32_t a, b, f, g, s, big, t, d, n;
	/* the files with contents: inode numbers are reused, generations not */
	struct { uint32_t ino, generation, seed; } file[8];
	unsigned nfiles;
};

#define SEED_F 1
#define SEED_G 2
#define SEED_BIG 3
#define SEED_T 4
#define SEED_N 5

static void mark(struct sufs_fs *fs, struct marks *m, unsigned step)
{
	m->step[step] = sufs_get_dev(fs)->barriers;
}

/* A file of the workload whose bytes are the pattern `seed`. */
static uint32_t note(struct sufs_fs *fs, struct marks *m, uint32_t ino, uint32_t seed)
{
	struct sufs_stat st;

	assert_int_equal(sufs_stat(fs, ino, &st), 0);
	assert_true(m->nfiles < 8);
	m->file[m->nfiles].ino = ino;
	m->file[m->nfiles].generation = st.generation;
	m->file[m->nfiles].seed = seed;
	m->nfiles++;
	return ino;
}

static void epoch(struct sufs_fs *fs)
{
	assert_true(deps_epoch(fs, NULL, NULL, 1) >= 0);
}

static void mv(struct sufs_fs *fs, uint32_t sdir, const char *s, uint32_t ddir, const char *d)
{
	int rc = sufs_rename(fs, sdir, s, strlen(s), ddir, d, strlen(d));

	if (rc)
		fail_msg("rename %s %s: %s", s, d, sufs_strerror(rc));
}

static void workload(struct sufs_fs *fs, struct marks *m)
{
	uint32_t ino;

	mark(fs, m, 1);
	m->a = mkdir_(fs, SUFS_ROOT_INO, "a");
	epoch(fs);
	mark(fs, m, 2);
	m->b = mkdir_(fs, m->a, "b");
	mark(fs, m, 3);
	m->f = note(fs, m, mkfile(fs, m->a, "f"), SEED_F);
	write_pattern(fs, m->f, 0, 6 * 1024 + 100, SEED_F);
	epoch(fs);
	mark(fs, m, 4);
	m->g = note(fs, m, mkfile(fs, m->b, "g"), SEED_G);
	write_pattern(fs, m->g, 0, 100, SEED_G);
	write_pattern(fs, m->g, 200 * 1024, 50, SEED_G);
	epoch(fs);
	mark(fs, m, 5);
	assert_int_equal(sufs_symlink(fs, m->a, "s", 1, long_target(), NULL, &m->s), 0);
	epoch(fs);
	mark(fs, m, 6);
	m->big = note(fs, m, mkfile(fs, SUFS_ROOT_INO, "big"), SEED_BIG);
	write_pattern(fs, m->big, 0, 40 * 1024, SEED_BIG);
	epoch(fs);
	epoch(fs);
	mark(fs, m, 7);
	assert_int_equal(sufs_sync(fs), 0);
	m->synced = sufs_get_dev(fs)->barriers;

	mark(fs, m, 8);
	mv(fs, m->a, "f", m->b, "f2");
	epoch(fs);
	mark(fs, m, 9);
	mv(fs, m->a, "b", SUFS_ROOT_INO, "c");
	epoch(fs);
	mark(fs, m, 10);
	assert_int_equal(sufs_link(fs, m->f, m->a, "hard", 4), 0);
	mark(fs, m, 11);
	assert_int_equal(sufs_unlink(fs, m->a, "s", 1), 0);
	epoch(fs);
	mark(fs, m, 12);
	write_pattern(fs, m->big, 40 * 1024, 4096, SEED_BIG);
	epoch(fs);
	assert_int_equal(sufs_truncate(fs, m->big, 5 * 1024 + 10), 0);
	epoch(fs);
	write_pattern(fs, m->big, 5 * 1024 + 10, 3000, SEED_BIG);
	epoch(fs);
	mark(fs, m, 13);
	m->t = note(fs, m, mkfile(fs, m->a, "t"), SEED_T);
	write_pattern(fs, m->t, 0, 2048, SEED_T);
	epoch(fs);
	mark(fs, m, 14);
	mv(fs, m->a, "t", m->b, "g");
	epoch(fs);
	mark(fs, m, 15);
	m->d = mkdir_(fs, SUFS_ROOT_INO, "d");
	mkdir_(fs, m->d, "e");
	epoch(fs);
	mark(fs, m, 16);
	assert_int_equal(sufs_rmdir(fs, m->d, "e", 1), 0);
	epoch(fs);
	mark(fs, m, 17);
	m->n = note(fs, m, mkfile(fs, m->d, "n"), SEED_N);
	write_pattern(fs, m->n, 0, 3000, SEED_N);
	assert_int_equal(sufs_fsync(fs, m->n), 0);
	m->fsynced = sufs_get_dev(fs)->barriers;
	mark(fs, m, 18);
	assert_int_equal(sufs_unlink(fs, m->a, "hard", 4), 0);
	epoch(fs);
	mark(fs, m, 19);
	mv(fs, SUFS_ROOT_INO, "d", m->a, "d2");
	epoch(fs);
	mark(fs, m, 20);
	write_pattern(fs, m->f, 16600u << 10, 10, SEED_F);
	epoch(fs);
	mark(fs, m, 21);
	assert_int_equal(sufs_truncate(fs, m->f, 3073), 0);
	epoch(fs);
	mark(fs, m, 22);
	mv(fs, m->b, "f2", m->b, "f3");
	mark(fs, m, 23);
	assert_int_equal(sufs_lookup(fs, m->b, "f3", 2, &ino), 0);
	assert_int_equal(ino, m->f);
}

struct crash {
	unsigned mode;
	uint32_t bsize;
	size_t size;
	uint8_t *base;             /* the image before the workload */
	struct mem disk;           /* the image being crashed */
	struct rec rec;
	struct rec_write *full;    /* the log of the run without a crash */
	size_t nfull;
	struct marks m;
	unsigned states;
	uint64_t data_blocks;      /* data blocks whose bytes were checked */
};

/* Run the workload on a fresh copy of the base image, crashing at barrier
 * stop_after with `keep` of the epoch in flight (stop_after -1: no crash). */
static void run(struct crash *c, long stop_after, uint64_t keep, struct marks *m)
{
	struct sufs_fs *fs;
	struct sufs_dev *dev;
	size_t i;

	/* back to the base image: only what the last run wrote differs */
	for (i = 0; i < c->rec.n; i++)
		if (c->rec.log[i].reached)
			memcpy(c->disk.bytes + c->rec.log[i].blk * c->bsize,
			       c->base + c->rec.log[i].blk * c->bsize, c->bsize);
	dev = rec_dev(&c->rec, mem_dev(&c->disk, 1), c->bsize);
	c->rec.stop_after = stop_after;
	c->rec.keep = keep;
	assert_int_equal(sufs_open_dev(dev, SUFS_OPEN_RDWR, 0, &fs), 0);
	quiet(fs);
	if (c->mode != SUFS_MODE_SOFTDEP)
		assert_int_equal(sufs_set_mode(fs, c->mode), 0);
	memset(m, 0, sizeof(*m));
	workload(fs, m);
	/* past the crash the device drops every write: closing is abandoning */
	assert_int_equal(sufs_close(fs), 0);
	m->end = c->rec.barriers;
	/* the same run, write for write */
	if (c->full)
		assert_int_equal(c->rec.n, c->nfull);
	for (i = 0; c->full && i < c->rec.n; i++) {
		assert_int_equal(c->rec.log[i].blk, c->full[i].blk);
		assert_int_equal(c->rec.log[i].epoch, c->full[i].epoch);
	}
}

/* What the tree walk has seen. */
struct seen {
	struct crash *c;
	struct sufs_fs *fs;
	const char *state;
	uint32_t ninodes;
	uint64_t nblocks;
	uint32_t *refs;            /* entries that name each inode ("." and ".." too) */
	uint32_t *dotdot;          /* each directory's ".." */
	uint8_t *visited;          /* directories walked */
	uint8_t *inspected;        /* inodes whose blocks were claimed */
	uint8_t *claimed;          /* blocks mapped by an inode */
	uint32_t (*sub)[2];        /* (directory, subdirectory named in it) */
	size_t nsub;
	uint32_t inspecting;
	uint32_t seed;
};

struct entries {
	struct { char name[SUFS_NAME_MAX + 1]; uint32_t ino; unsigned ftype; } *e;
	size_t n;
};

static int entries_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct entries *es = arg;

	es->e = realloc(es->e, (es->n + 1) * sizeof(*es->e));
	assert_non_null(es->e);
	memcpy(es->e[es->n].name, name, len);
	es->e[es->n].name[len] = 0;
	es->e[es->n].ino = ino;
	es->e[es->n].ftype = ftype;
	es->n++;
	return 0;
}

static uint32_t seed_of(const struct marks *m, const struct sufs_stat *st)
{
	unsigned i;

	for (i = 0; i < m->nfiles; i++)
		if (m->file[i].ino == st->ino && m->file[i].generation == st->generation)
			return m->file[i].seed;
	return 0;
}

/* Every block an inode maps: in range, allocated, nobody else's; a data
 * block of a file holds its pattern or zeros (never garbage). */
static int claim_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		    int bad, void *arg)
{
	struct seen *s = arg;
	uint8_t buf[SUFS_MAX_BLOCK_SIZE];
	uint32_t i, bsize = s->c->bsize;

	if (bad)
		fail_msg("%s: inode %u maps block %llu, out of range", s->state, ino,
			 (unsigned long long)pblk);
	if (s->claimed[pblk])
		fail_msg("%s: block %llu is mapped twice (inode %u)", s->state,
			 (unsigned long long)pblk, ino);
	s->claimed[pblk] = 1;
	if (bit(fs, SUFS_BITMAP_BLOCK, pblk) != 1)
		fail_msg("%s: block %llu of inode %u is free in the bitmap", s->state,
			 (unsigned long long)pblk, ino);
	if (level || !s->seed)
		return 0;
	s->c->data_blocks++;
	assert_int_equal(sufs_block_read(fs, pblk, buf), 0);
	for (i = 0; i < bsize; i++)
		if (buf[i] && buf[i] != tu_pattern_byte(s->seed, lblk * bsize + i))
			fail_msg("%s: inode %u holds garbage at byte %llu", s->state, ino,
				 (unsigned long long)(lblk * bsize + i));
	return 0;
}

static void inspect(struct seen *s, uint32_t ino)
{
	struct sufs_stat st;
	char target[512];
	size_t len;
	int rc;

	if (s->inspected[ino])
		return;
	s->inspected[ino] = 1;
	assert_int_equal(sufs_stat(s->fs, ino, &st), 0);
	if (bit(s->fs, SUFS_BITMAP_INODE, ino) != 1)
		fail_msg("%s: inode %u is named but free in the bitmap", s->state, ino);
	s->seed = S_ISREG(st.mode) ? seed_of(&s->c->m, &st) : 0;
	rc = sufs_block_iterate(s->fs, ino, claim_fn, s);
	if (rc)
		fail_msg("%s: blocks of inode %u: %s", s->state, ino, sufs_strerror(rc));
	if (S_ISLNK(st.mode)) {
		assert_int_equal(sufs_readlink(s->fs, ino, target, sizeof(target), &len), 0);
		assert_int_equal(len, strlen(long_target()));
		assert_memory_equal(target, long_target(), len);
	}
}

static void walk(struct seen *s, uint32_t dir)
{
	struct entries es = { NULL, 0 };
	struct sufs_stat st;
	unsigned dots = 0, dotdots = 0;
	size_t i;
	int rc;

	s->visited[dir] = 1;
	inspect(s, dir);
	rc = sufs_readdir(s->fs, dir, entries_fn, &es);
	if (rc)
		fail_msg("%s: directory %u: %s", s->state, dir, sufs_strerror(rc));
	for (i = 0; i < es.n; i++) {
		const char *name = es.e[i].name;
		uint32_t ino = es.e[i].ino;

		if (ino < 1 || ino > s->ninodes)
			fail_msg("%s: \"%s\" in %u names inode %u", s->state, name, dir, ino);
		s->refs[ino]++;
		if (!strcmp(name, ".")) {
			assert_int_equal(ino, dir);
			dots++;
			continue;
		}
		if (!strcmp(name, "..")) {
			s->dotdot[dir] = ino;
			dotdots++;
			continue;
		}
		rc = sufs_stat(s->fs, ino, &st);
		if (rc)
			fail_msg("%s: \"%s\" in directory %u names inode %u: %s", s->state, name,
				 dir, ino, sufs_strerror(rc));
		if (es.e[i].ftype != sufs_ftype_of_mode(st.mode))
			fail_msg("%s: \"%s\" in directory %u has type %u, its inode mode 0%o",
				 s->state, name, dir, es.e[i].ftype, st.mode);
		if (S_ISDIR(st.mode)) {
			s->sub = realloc(s->sub, (s->nsub + 1) * sizeof(*s->sub));
			assert_non_null(s->sub);
			s->sub[s->nsub][0] = dir;
			s->sub[s->nsub][1] = ino;
			s->nsub++;
			if (!s->visited[ino])
				walk(s, ino);
		} else {
			inspect(s, ino);
		}
	}
	if (dots != 1 || dotdots != 1)
		fail_msg("%s: directory %u has %u \".\" and %u \"..\"", s->state, dir, dots,
			 dotdots);
	free(es.e);
}

static int named_in(const struct seen *s, uint32_t dir, uint32_t child)
{
	size_t i;

	for (i = 0; i < s->nsub; i++)
		if (s->sub[i][0] == dir && s->sub[i][1] == child)
			return 1;
	return 0;
}

/* A file that must be there with at least its first len bytes. */
static void assert_durable(struct seen *s, uint32_t ino, uint64_t len, uint32_t seed,
			   const char *what)
{
	struct sufs_stat st;
	uint8_t buf[8192];
	size_t done;

	assert_true(len <= sizeof(buf));
	if (!s->inspected[ino])
		fail_msg("%s: %s (inode %u) is not reachable", s->state, what, ino);
	assert_int_equal(sufs_stat(s->fs, ino, &st), 0);
	if (st.size < len)
		fail_msg("%s: %s is %llu bytes, not at least %llu", s->state, what,
			 (unsigned long long)st.size, (unsigned long long)len);
	assert_int_equal(sufs_read(s->fs, ino, 0, buf, len, &done), 0);
	assert_int_equal(done, len);
	if (tu_pattern_check(buf, len, seed, 0) >= 0)
		fail_msg("%s: %s lost bytes", s->state, what);
}

static void assert_path(struct sufs_fs *fs, const char *path, uint32_t ino, uint64_t size)
{
	uint32_t got = 0;
	struct sufs_stat st;

	assert_int_equal(sufs_namei(fs, SUFS_ROOT_INO, path, 0, &got), 0);
	assert_int_equal(got, ino);
	assert_int_equal(sufs_stat(fs, ino, &st), 0);
	if (S_ISREG(st.mode))
		assert_int_equal(st.size, size);
}

static void assert_entries(struct sufs_fs *fs, uint32_t dir, size_t n)
{
	struct entries es = { NULL, 0 };

	assert_int_equal(sufs_readdir(fs, dir, entries_fn, &es), 0);
	assert_int_equal(es.n, n);
	free(es.e);
}

/*
 * The image after a crash, opened read-only: every name reaches an
 * initialised inode of its type; every block pointer is in range, allocated
 * and unshared; no file shows bytes it was never given; every directory's
 * ".." names it; no link count is below the names it has.  Leaks (allocated
 * but unreachable, counts too high) are allowed, except right after a sync
 * and after the close (with nothing of a later epoch).  What was synced or
 * fsynced is there.
 */
static void check_state(struct crash *c, uint64_t n, uint64_t keep, const char *state)
{
	const struct marks *m = &c->m;
	struct sufs_fs *fs;
	struct seen s;
	struct sufs_stat st;
	struct sufs_group_layout l;
	uint32_t ino;
	uint64_t b;
	int exact = !keep && (n == m->synced || n == m->end);

	assert_int_equal(sufs_open_dev(mem_dev(&c->disk, 0), 0, 0, &fs), 0);
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.fs = fs;
	s.state = state;
	s.ninodes = sufs_get_super(fs)->inodes_count;
	s.nblocks = sufs_get_super(fs)->blocks_count;
	s.refs = calloc(s.ninodes + 1, sizeof(*s.refs));
	s.dotdot = calloc(s.ninodes + 1, sizeof(*s.dotdot));
	s.visited = calloc(s.ninodes + 1, 1);
	s.inspected = calloc(s.ninodes + 1, 1);
	s.claimed = calloc(s.nblocks, 1);
	assert_true(s.refs && s.dotdot && s.visited && s.inspected && s.claimed);

	walk(&s, SUFS_ROOT_INO);
	assert_int_equal(s.dotdot[SUFS_ROOT_INO], SUFS_ROOT_INO);
	for (ino = 1; ino <= s.ninodes; ino++) {
		if (s.visited[ino] && ino != SUFS_ROOT_INO && !named_in(&s, s.dotdot[ino], ino))
			fail_msg("%s: \"..\" of directory %u is %u, which does not name it",
				 state, ino, s.dotdot[ino]);
		if (!s.refs[ino])
			continue;
		assert_int_equal(sufs_stat(fs, ino, &st), 0);
		if (st.links < s.refs[ino] || (exact && st.links != s.refs[ino]))
			fail_msg("%s: inode %u has %u links and %u names", state, ino, st.links,
				 s.refs[ino]);
	}
	if (exact) {
		/* no leaks either */
		for (ino = SUFS_ROOT_INO; ino <= s.ninodes; ino++)
			if (bit(fs, SUFS_BITMAP_INODE, ino) != s.inspected[ino])
				fail_msg("%s: inode %u: bitmap %d, reachable %d", state, ino,
					 bit(fs, SUFS_BITMAP_INODE, ino), s.inspected[ino]);
		sufs_group_layout(sufs_get_super(fs), 0, &l);
		for (b = l.first_data; b < s.nblocks; b++)
			if (bit(fs, SUFS_BITMAP_BLOCK, b) != s.claimed[b])
				fail_msg("%s: block %llu: bitmap %d, mapped %d", state,
					 (unsigned long long)b, bit(fs, SUFS_BITMAP_BLOCK, b),
					 s.claimed[b]);
	}

	/* what a sync or an fsync made durable */
	if (n >= m->synced) {
		if (!s.visited[m->a] || !s.visited[m->b])
			fail_msg("%s: a synced directory is gone", state);
		assert_durable(&s, m->f, 3073, SEED_F, "/a/f");
		assert_durable(&s, m->big, 5 * 1024 + 10, SEED_BIG, "/big");
		if (n < m->step[14])
			assert_durable(&s, m->g, 100, SEED_G, "/a/b/g");
		if (n < m->step[11] && !s.inspected[m->s])
			fail_msg("%s: the synced symlink is gone", state);
	}
	if (n >= m->fsynced)
		assert_durable(&s, m->n, 3000, SEED_N, "n");
	if (n == m->end) {
		assert_path(fs, "/a", m->a, 0);
		assert_path(fs, "/a/d2", m->d, 0);
		assert_path(fs, "/a/d2/n", m->n, 3000);
		assert_path(fs, "/c", m->b, 0);
		assert_path(fs, "/c/f3", m->f, 3073);
		assert_path(fs, "/c/g", m->t, 2048);
		assert_path(fs, "/big", m->big, 5 * 1024 + 10 + 3000);
		assert_durable(&s, m->big, 5 * 1024 + 10 + 3000, SEED_BIG, "/big");
		assert_entries(fs, SUFS_ROOT_INO, 5);
		assert_entries(fs, m->a, 3);
		assert_entries(fs, m->b, 4);
		assert_entries(fs, m->d, 3);
		assert_durable(&s, m->t, 2048, SEED_T, "/c/g");
		tu_assert_summaries(fs);
	}
	assert_int_equal(sufs_close(fs), 0);
	free(s.refs);
	free(s.dotdot);
	free(s.visited);
	free(s.inspected);
	free(s.claimed);
	free(s.sub);
	c->states++;
}

/*
 * A disk holds old bytes where nothing lives: fill every free block of the
 * base image with junk, so that a pointer that reaches the disk before what
 * it points to shows garbage, not innocent zeros.
 */
#define JUNK 0xa5

static void fill_free_blocks(struct crash *c)
{
	struct sufs_fs *fs;
	uint64_t b, n, nfree = 0;

	assert_int_equal(sufs_open_dev(mem_dev(&(struct mem){ c->base, c->size }, 0), 0, 0, &fs),
			 0);
	n = sufs_get_super(fs)->blocks_count;
	for (b = 0; b < n; b++) {
		if (bit(fs, SUFS_BITMAP_BLOCK, b))
			continue;
		memset(c->base + b * c->bsize, JUNK, c->bsize);
		nfree++;
	}
	assert_int_equal(nfree, sufs_get_super(fs)->free_blocks);
	assert_int_equal(sufs_close(fs), 0);
}

static void crash_after_every_barrier_and_within_every_epoch(unsigned mode)
{
	struct crash c;
	struct tfs t;
	struct marks m;
	uint64_t n, keep, k, i, nkeep, *masks;
	char state[96];
	FILE *f;

	memset(&c, 0, sizeof(c));
	c.mode = mode;
	c.bsize = 1024;
	c.size = 4u << 20;
	tu_make(&t, c.size, c.bsize);
	tu_close(&t);
	c.base = malloc(c.size);
	c.disk.bytes = malloc(c.size);
	c.disk.size = c.size;
	assert_non_null(c.base);
	assert_non_null(c.disk.bytes);
	f = fopen(t.path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(c.base, 1, c.size, f), c.size);
	fclose(f);
	tu_destroy(&t);
	fill_free_blocks(&c);
	memcpy(c.disk.bytes, c.base, c.size);

	/* the run without a crash: its log and its marks */
	run(&c, -1, 0, &c.m);
	c.full = malloc(c.rec.n * sizeof(*c.full));
	assert_non_null(c.full);
	memcpy(c.full, c.rec.log, c.rec.n * sizeof(*c.full));
	c.nfull = c.rec.n;
	assert_true(c.m.end > 25);
	assert_true(c.m.synced > c.m.step[7] && c.m.fsynced > c.m.step[17]);
	masks = malloc(256 * sizeof(*masks));
	assert_non_null(masks);

	for (n = 0; n <= c.m.end; n++) {
		/* the writes of the epoch after barrier n */
		for (k = 0, i = 0; i < c.nfull; i++)
			k += c.full[i].epoch == n;
		assert_true(k <= 64);
		/* nothing of it, then parts of it (all of it is barrier n + 1) */
		nkeep = 0;
		masks[nkeep++] = 0;
		if (k > 1 && k <= 6) {
			for (keep = 1; keep + 1 < (1ull << k); keep++)
				masks[nkeep++] = keep;
		} else if (k > 6) {
			for (i = 0; i < k; i++) {
				masks[nkeep++] = 1ull << i;
				masks[nkeep++] = (k == 64 ? ~0ull : (1ull << k) - 1) & ~(1ull << i);
			}
		}
		for (i = 0; i < nkeep; i++) {
			run(&c, (long)n, masks[i], &m);
			/* the same run, the same files */
			assert_int_equal(m.end, c.m.end);
			assert_int_equal(m.nfiles, c.m.nfiles);
			assert_memory_equal(m.file, c.m.file, sizeof(m.file));
			snprintf(state, sizeof(state), "%s: crash after barrier %llu of %llu, keeping 0x%llx",
				 sufs_mode_name(mode), (unsigned long long)n,
				 (unsigned long long)c.m.end, (unsigned long long)masks[i]);
			check_state(&c, n, masks[i], state);
		}
	}
	assert_true(c.states > c.m.end);
	assert_true(c.data_blocks > c.states);
	free(masks);
	free(c.full);
	free(c.rec.log);
	free(c.base);
	free(c.disk.bytes);
}

static void a_crash_after_any_barrier_or_within_any_epoch_leaves_only_leaks(void **state)
{
	(void)state;
	crash_after_every_barrier_and_within_every_epoch(SUFS_MODE_SOFTDEP);
}

static void a_crash_in_sync_mode_leaves_only_leaks_too(void **state)
{
	(void)state;
	crash_after_every_barrier_and_within_every_epoch(SUFS_MODE_SYNC);
}

/* ---- the engine as tools see it: sufs_deps_walk, sufs_deps_flush --------------- */

/* What a walk or a flush reported, copied out of the callback. */
struct walk_dep {
	uint64_t blk, id;
	char kind[16];
	char type[16];
	uint32_t off, len;
	unsigned state, nwaits;
	uint64_t waits[4];
	int undoable;
};
struct walk_seen {
	struct walk_dep d[256];
	unsigned n, blocks;
	uint64_t blk[64];
};

static int record(void *arg, const struct sufs_dep_block *b)
{
	struct walk_seen *s = arg;
	size_t i;

	assert_true(s->blocks < 64);
	s->blk[s->blocks++] = b->blk;
	for (i = 0; i < b->ndeps; i++) {
		struct walk_dep *d = &s->d[s->n++];
		assert_true(s->n <= 256);
		d->blk = b->blk;
		d->id = b->deps[i].id;
		snprintf(d->kind, sizeof(d->kind), "%s", b->deps[i].kind);
		snprintf(d->type, sizeof(d->type), "%s", b->type);
		d->off = b->deps[i].off;
		d->len = b->deps[i].len;
		d->state = b->deps[i].state;
		d->undoable = b->deps[i].undoable;
		d->nwaits = b->deps[i].nwaits;
		assert_true(d->nwaits <= 4);
		memcpy(d->waits, b->deps[i].waits, d->nwaits * sizeof(uint64_t));
		if (i)
			assert_true(b->deps[i - 1].id < b->deps[i].id); /* oldest first */
	}
	return 0;
}

static const struct walk_dep *seen_id(const struct walk_seen *s, uint64_t id)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (s->d[i].id == id)
			return &s->d[i];
	fail_msg("update %llu was not reported", (unsigned long long)id);
	return NULL;
}

static void a_walk_reports_every_pending_update_its_range_what_it_waits_for_and_its_fate(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t A = AREA, B = AREA + 1;
	struct walk_seen s = { .n = 0 };
	const struct walk_dep *d;
	upd_id a, b1, b2;

	put_block(fs, B, 1);
	a = change(fs, A, 0, 16, 0xaa, NULL, 0);
	b1 = change(fs, B, 0, 8, 0xb1, NULL, 0);
	b2 = change(fs, B, 100, 8, 0xb2, &a, 1);

	assert_int_equal(sufs_deps_walk(fs, SUFS_DEPS_ALL, record, &s), 0);
	assert_int_equal(s.blocks, 2);
	assert_true(s.blk[0] == A && s.blk[1] == B);  /* in block order */
	assert_int_equal(s.n, 3);
	d = seen_id(&s, a);
	assert_true(d->blk == A && d->off == 0 && d->len == 16 && d->nwaits == 0);
	assert_int_equal(d->state, SUFS_DEP_READY);
	assert_false(d->undoable);
	assert_string_equal(d->kind, "data");
	assert_string_equal(d->type, "data");
	d = seen_id(&s, b1);
	assert_int_equal(d->state, SUFS_DEP_READY);
	d = seen_id(&s, b2);
	assert_true(d->blk == B && d->off == 100 && d->len == 8);
	assert_int_equal(d->state, SUFS_DEP_BLOCKED);  /* a is not on disk */
	assert_true(d->undoable);
	assert_int_equal(d->nwaits, 1);
	assert_int_equal(d->waits[0], a);

	/* one block only; a block with nothing dirty is not visited */
	memset(&s, 0, sizeof(s));
	assert_int_equal(sufs_deps_walk(fs, B, record, &s), 0);
	assert_int_equal(s.blocks, 1);
	assert_int_equal(s.n, 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(sufs_deps_walk(fs, AREA + 2, record, &s), 0);
	assert_int_equal(s.blocks, 0);

	/* a walk writes nothing and changes nothing */
	assert_int_equal(fs->deps->pending, 3);
	assert_int_equal(fs->cache.dirty, 2);
	settle(fs);
	memset(&s, 0, sizeof(s));
	assert_int_equal(sufs_deps_walk(fs, SUFS_DEPS_ALL, record, &s), 0);
	assert_int_equal(s.blocks, 0);
}

static void a_flush_reports_per_block_written_what_went_out_and_what_was_undone(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	const uint64_t A = AREA, B = AREA + 1, C = AREA + 5;
	struct walk_seen s = { .n = 0 };
	upd_id a, b1, b2, c;

	put_block(fs, B, 1);
	a = change(fs, A, 0, 16, 0xaa, NULL, 0);
	b1 = change(fs, B, 0, 8, 0xb1, NULL, 0);
	b2 = change(fs, B, 100, 8, 0xb2, &a, 1);
	c = change(fs, C, 0, 8, 0xcc, &b2, 1);   /* C waits for B's undone part */

	/* epoch 1: A whole, B with b2 undone; C has nothing it may write */
	assert_int_equal(sufs_deps_flush(fs, record, &s), 2);
	assert_int_equal(s.blocks, 2);
	assert_true(s.blk[0] == A && s.blk[1] == B);
	assert_int_equal(seen_id(&s, a)->state, SUFS_DEP_WRITTEN);
	assert_int_equal(seen_id(&s, b1)->state, SUFS_DEP_WRITTEN);
	assert_int_equal(seen_id(&s, b2)->state, SUFS_DEP_UNDONE);
	assert_null(deps_find(fs, a));
	assert_non_null(deps_find(fs, b2));
	assert_non_null(deps_find(fs, c));

	/* epoch 2: B again, now whole */
	memset(&s, 0, sizeof(s));
	assert_int_equal(sufs_deps_flush(fs, record, &s), 1);
	assert_int_equal(s.blocks, 1);
	assert_int_equal(s.blk[0], B);
	assert_int_equal(seen_id(&s, b2)->state, SUFS_DEP_WRITTEN);

	/* epoch 3: C; then nothing is left to write */
	memset(&s, 0, sizeof(s));
	assert_int_equal(sufs_deps_flush(fs, NULL, NULL), 1);
	assert_int_equal(sufs_deps_flush(fs, record, &s), 0);
	assert_int_equal(s.blocks, 0);
	assert_int_equal(fs->deps->pending, 0);
	assert_null(fs->trace);  /* the hook is given back */
}

static void a_flush_takes_as_many_epochs_as_the_longest_chain_of_blocks(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	upd_id prev = 0;
	unsigned i, epochs = 0;
	int n;

	/* a chain over 6 blocks: each block's update waits for the previous one */
	for (i = 0; i < 6; i++)
		prev = change(fs, AREA + i, 0, 8, (uint8_t)(i + 1), prev ? &prev : NULL, prev ? 1 : 0);
	while ((n = sufs_deps_flush(fs, NULL, NULL)) > 0) {
		assert_int_equal(n, 1);
		epochs++;
	}
	assert_int_equal(n, 0);
	assert_int_equal(epochs, 6);
}

static void mkdir_shows_a_diradd_waiting_for_the_new_inodes_inodedep(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct walk_seen s = { .n = 0 };
	unsigned i, k, blocked = 0, found = 0, mkdir = 0;

	settle(fs);
	mkdir_(fs, SUFS_ROOT_INO, "a");
	assert_int_equal(sufs_deps_walk(fs, SUFS_DEPS_ALL, record, &s), 0);
	for (i = 0; i < s.n; i++) {
		const struct walk_dep *d = &s.d[i];
		mkdir += strcmp(d->kind, "mkdir") == 0;
		unsigned on_inode = 0;
		if (strcmp(d->kind, "diradd"))
			continue;
		for (k = 0; k < d->nwaits; k++)
			on_inode += strcmp(seen_id(&s, d->waits[k])->kind, "inodedep") == 0;
		/* a header and name wait at most for the carving of their slot,
		 * '.' and '..' in the new block for their headers and the block:
		 * only the new entry's inode number waits for an inode */
		if (!on_inode)
			continue;
		assert_string_equal(d->type, "directory");
		assert_int_equal(d->state, SUFS_DEP_BLOCKED);
		assert_int_equal(d->len, 4);
		blocked++;
		for (k = 0; k < d->nwaits; k++) {
			const struct walk_dep *w = seen_id(&s, d->waits[k]);
			/* the new inode, initialised whole */
			if (strcmp(w->kind, "inodedep") == 0 &&
			    strcmp(w->type, "inode table") == 0 && w->len == SUFS_INODE_SIZE)
				found++;
		}
	}
	assert_int_equal(blocked, 1);
	assert_int_equal(found, 1);
	assert_int_equal(mkdir, 1);  /* the new directory's first block */
}

static void a_read_only_file_system_refuses_to_flush(void **state)
{
	struct tfs *t = *state;

	tu_reopen(t, 0);
	assert_int_equal(sufs_deps_flush(t->fs, NULL, NULL), -EROFS);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(a_write_image_undoes_an_update_until_what_it_waits_for_is_on_disk),
		T(an_overlapping_update_waits_for_the_older_one_and_undo_goes_newest_first),
		T(an_epoch_fills_a_short_gap_in_a_run_with_the_dirty_blocks_in_it),
		T(an_epoch_fills_a_short_gap_with_the_clean_blocks_the_cache_holds),
		T(changes_of_one_counter_wait_for_their_own_reasons_only),
		T(a_wait_for_a_change_never_undone_on_the_same_block_is_met_by_its_writes),
		T(a_slot_is_busy_while_what_lies_over_it_waits_for_a_name_elsewhere_even_through_its_own_block),
		T(a_change_waiting_for_nothing_folds_into_the_update_never_undone_but_not_over_an_older_undoable_one),
		T(a_change_that_adds_no_wait_is_merged_into_the_update_it_overlaps),
		T(a_change_waits_for_every_update_of_an_array_longer_than_a_wait_set),
		T(a_block_with_many_pending_updates_finds_every_overlap_through_its_index),
		T(a_change_over_two_updates_folds_into_the_newer_when_it_waits_for_the_older),
		T(old_bytes_that_are_all_zero_are_kept_as_a_flag_not_a_copy),
		T(updates_wait_only_for_older_updates_through_a_random_mix_of_2000_operations),
		T(every_epoch_writes_a_block_of_a_long_chain_and_a_drain_ends_with_nothing_pending),
		T(a_drain_holds_back_only_blocks_off_the_longest_chain_and_takes_its_epochs),
		T(write_back_of_a_deep_tree_makes_progress_in_every_epoch),
		T(two_blocks_waiting_for_each_other_go_out_with_parts_undone_then_whole),
		T(an_inode_block_and_a_directory_block_waiting_for_each_other_resolve_by_undo),
		T(a_freed_block_or_inode_is_reused_only_after_the_old_pointer_is_cleared_on_disk),
		T(blocks_cut_by_truncate_are_reused_only_after_the_cut_is_on_disk),
		T(deferred_work_runs_only_after_the_barrier_that_puts_its_updates_on_disk),
		T(a_failed_barrier_leaves_its_updates_pending_and_their_blocks_dirty),
		T(a_failed_write_leaves_no_update_in_flight),
		T(a_block_goes_out_only_after_a_barrier_has_followed_what_it_waits_for),
		T(flush_set_writes_what_the_set_waits_for_first_and_nothing_else),
		T(flush_set_takes_each_update_once_however_many_paths_lead_to_it),
		T(fsync_makes_the_file_and_its_names_durable_and_writes_nothing_else),
		T(a_file_removed_before_it_reached_the_disk_is_never_written),
		T(a_file_is_forgotten_whether_or_not_its_inode_block_holds_a_change_never_undone),
		T(a_file_renamed_over_a_name_then_away_and_removed_is_never_written),
		T(a_removed_files_blocks_not_yet_on_disk_are_freed_at_once),
		T(removing_a_deep_tree_writes_each_block_once_in_a_sync),
		T(a_sync_writes_a_new_directory_block_before_its_pointer_and_with_its_names_after),
		T(in_sync_mode_every_operation_leaves_nothing_but_data_pending),
		T(in_async_mode_no_update_is_recorded_and_a_sync_is_one_barrier),
		T(in_softdep_mode_nothing_is_written_until_a_limit_or_a_sync_asks),
		T(a_walk_reports_every_pending_update_its_range_what_it_waits_for_and_its_fate),
		T(a_flush_reports_per_block_written_what_went_out_and_what_was_undone),
		T(a_flush_takes_as_many_epochs_as_the_longest_chain_of_blocks),
		T(mkdir_shows_a_diradd_waiting_for_the_new_inodes_inodedep),
		T(a_read_only_file_system_refuses_to_flush),
		cmocka_unit_test(a_crash_after_any_barrier_or_within_any_epoch_leaves_only_leaks),
		cmocka_unit_test(a_crash_in_sync_mode_leaves_only_leaks_too),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
