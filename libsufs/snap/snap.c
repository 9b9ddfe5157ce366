/*
 * snap.c - snapshots: a frozen view of the file system, kept in a file.
 *
 * A snapshot is a regular file /.snap/NAME, as large as the file system and
 * sparse, named in one of the superblock's slots.  Its logical block n
 * stands for block n of the file system as it was when the snapshot was
 * taken:
 *
 *   - a pointer to a block of its own: the old contents, copied there
 *     before block n was first changed (or, for the metadata written
 *     outside the cache, when it was taken);
 *   - a pointer to n itself: block n was freed since, and the snapshot
 *     claimed it instead of letting it be reused;
 *   - a hole: block n is unchanged since (read it from the file system), or
 *     it was free then (its bit is clear in the snapshot's own copy of the
 *     block bitmap, which every snapshot holds from the start).
 *
 * In memory each snapshot has one bit per block, NEED: in use when the
 * snapshot was taken, and neither copied nor claimed yet.  Two hooks keep
 * the view frozen:
 *
 *   snap_cow()    the cache calls it before the first change of a block
 *                 that a snapshot needs.  The old contents go to a new
 *                 block of the snapshot, its pointer is set, and the block
 *                 gets one more update, COPYONWRITE: all of it, undo bytes
 *                 = the old contents, waiting for the snapshot's pointer.
 *                 Every later change of the block overlaps it and so waits
 *                 for it (the engine's invariant 2): until the copy, its
 *                 pointer and its bitmap bit are on disk, the block's write
 *                 image is its old contents.  One more dependency; no
 *                 other path.
 *   snap_claim()  free_block() calls it for a freed block a snapshot needs:
 *                 the snapshot takes the block instead (a pointer to it)
 *                 and it stays allocated.
 *
 * Snapshot files are left out of every snapshot's view ("expunged"): when
 * a snapshot is taken, its copy of the block bitmap has the blocks of every
 * snapshot file cleared, and its copies of the inode table blocks that hold
 * snapshot inodes show those inodes empty.  So a newer snapshot never needs
 * the blocks of an older one, and deleting a snapshot is unlinking its
 * file: free_block() hands each block it claimed to a snapshot that still
 * needs it, and frees the rest.
 *
 * Taking a snapshot writes everything back, creates the file, freezes (the
 * moment the snapshot stands for), writes the metadata copies, writes them
 * back, and only then writes the superblock slot: a crash before that
 * leaves no snapshot.
 */
#include "config.h"
#include "snap_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>


int need_test(const struct snap *s, uint64_t blk)
{
	return (s->need[blk >> 3] >> (blk & 7)) & 1;
}

static void need_clear(struct snap *s, uint64_t blk)
{
	s->need[blk >> 3] &= (uint8_t)~(1u << (blk & 7));
}

/* Does a later slot name the same file as slot i? */
static int slot_dup(const struct sufs_fs *fs, unsigned i)
{
	unsigned j;

	for (j = i + 1; j < SUFS_SNAP_SLOTS; j++)
		if (fs->sb.snap[j].ino == fs->sb.snap[i].ino)
			return 1;
	return 0;
}

int snap_needs(const struct sufs_fs *fs, uint64_t blk)
{
	unsigned i;

	for (i = 0; i < fs->nsnaps; i++)
		if (blk < fs->sb.blocks_count && need_test(fs->snaps[i], blk))
			return 1;
	return 0;
}

void snap_free(struct snap *s)
{
	if (s) {
		free(s->need);
		free(s);
	}
}

/*
 * The hooks that keep the views frozen are set while a snapshot is kept,
 * and only then: the cache's, before the first change of a block (copy on
 * write) and for a block about to be filled from scratch (its old
 * contents are read first), and the allocator's, for a freed block (a
 * snapshot that needs it claims it).
 */
static void set_hooks(struct sufs_fs *fs)
{
	int on = fs->nsnaps > 0;

	fs->cache.before_change = on ? snap_cow : NULL;
	fs->cache.wants_old = on ? snap_needs : NULL;
	fs->claim_freed = on ? snap_claim : NULL;
	fs->block_held = on ? snap_needs : NULL;
}

void snap_unload(struct sufs_fs *fs)
{
	unsigned i;

	for (i = 0; i < fs->nsnaps; i++)
		snap_free(fs->snaps[i]);
	fs->nsnaps = 0;
	set_hooks(fs);
}

int snap_remove_active(struct sufs_fs *fs, unsigned slot)
{
	unsigned i;

	for (i = 0; i < fs->nsnaps; i++) {
		if (fs->snaps[i]->slot == slot) {
			/* the others keep their order: oldest first */
			snap_free(fs->snaps[i]);
			memmove(&fs->snaps[i], &fs->snaps[i + 1],
				(--fs->nsnaps - i) * sizeof(fs->snaps[0]));
			set_hooks(fs);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- copy on write --------------------------------------------------------- */

/* Point logical block lblk of snapshot s at pblk.  Into ptr go the updates
 * that, once on disk, mean the pointer and the whole path to it are. */
static int snap_point(struct sufs_fs *fs, struct snap *s, uint64_t lblk, uint64_t pblk,
		      const struct waits *pw, struct waits *ptr)
{
	struct sufs_inode in;
	struct waits iw = { 0 }, path = { 0 };
	upd_id store = 0;
	unsigned i;
	int err = inode_load(fs, s->ino, &in);

	if (!err)
		err = bmap_set(fs, &in, lblk, pblk, lblk, pw, &iw, &path);
	if (!err)
		err = inode_store(fs, s->ino, &in, UPD_ALLOCDIRECT, &iw, &store);
	if (!err)
		waits_add(&path, store);
	/* and what is still pending on the path made before (an indirect
	 * block another copy made, its pointer not yet on disk) */
	if (!err && ptr)
		err = bmap_path_waits(fs, s->ino, &in, lblk, &path);
	for (i = 0; ptr && !err && i < path.n; i++)
		waits_add(ptr, path.id[i]);
	return err;
}

/* A copy of bytes into a new block of snapshot s standing for lblk. */
static int snap_copy(struct sufs_fs *fs, struct snap *s, uint64_t lblk, const uint8_t *bytes,
		     struct waits *ptr)
{
	struct waits pw = { 0 };
	struct buf *cb;
	uint64_t cblk;
	int err = block_new(fs, lblk, BUF_DATA, UPD_DATA, &cblk, &cb, &pw);

	if (err)
		return err;
	memcpy(cb->data, bytes, fs->bsize); /* part of the new block's update */
	buf_put(fs, cb);
	return snap_point(fs, s, lblk, cblk, &pw, ptr);
}

/*
 * A snapshot could not take its copy (no room): it is no longer a true
 * view.  Its slot is marked broken on disk now, before the change it
 * missed can reach the disk; it can only be deleted.  It needs nothing
 * more.  A copy or claim in progress may be using it (a copy's own blocks
 * can need copies on a damaged image: the calls nest), so it leaves the
 * list only when the outermost one ends (snap_end()).
 */
static void snap_break(struct sufs_fs *fs, struct snap *s)
{
	fs->sb.snap[s->slot].flags |= SUFS_SNAP_BROKEN;
	if (fs_write_super(fs, 0) == 0)
		sufs_dev_barrier(fs->dev);
	memset(s->need, 0, (size_t)(fs->sb.blocks_count + 7) / 8);
	s->broken = 1;
}

static void snap_begin(struct sufs_fs *fs)
{
	fs->snap_busy++;
}

static void snap_end(struct sufs_fs *fs)
{
	unsigned i;

	if (--fs->snap_busy)
		return;
	i = 0;
	while (i < fs->nsnaps)
		if (fs->snaps[i]->broken)
			snap_remove_active(fs, fs->snaps[i]->slot); /* the rest move down */
		else
			i++;
}

/*
 * Before the first change of b since some snapshot was taken: copy its old
 * contents into each snapshot that needs them, and make b's changes wait
 * for those copies (module comment): a hold for each snapshot's copy, all
 * of b, its old bytes kept, waiting for the copy's pointer and the path
 * to it.  Each hold overlaps, so waits for, the one before.
 */
void snap_cow(struct sufs_fs *fs, struct buf *b)
{
	struct waits ptr[SUFS_SNAP_SLOTS];
	uint8_t *old = NULL;
	unsigned i, n = 0;

	snap_begin(fs);
	for (i = 0; i < fs->nsnaps; i++) {
		struct snap *s = fs->snaps[i];

		if (b->blk >= fs->sb.blocks_count || !need_test(s, b->blk))
			continue;
		need_clear(s, b->blk); /* first: the copy changes other blocks */
		if (!old && (old = malloc(fs->bsize)) != NULL) {
			/* unchanged since the snapshot: as on disk */
			memcpy(old, b->data, fs->bsize);
			cache_seal(fs, b, old);
		}
		ptr[n] = (struct waits){ 0 };
		if (!old || snap_copy(fs, s, b->blk, old, &ptr[n]))
			snap_break(fs, s);
		else
			n++;
	}
	free(old);
	/* the holds once every copy is made: a hold's own change of b finds
	 * no snapshot that still needs b */
	for (i = 0; i < n; i++)
		if (ptr[i].n && fs->broken_rule != 4)
			buf_update(fs, b, 0, fs->bsize, UPD_COPYONWRITE, &ptr[i]);
	snap_end(fs);
}

/* Has a snapshot claimed blk (a pointer to blk itself)? */
int snap_claimed(struct sufs_fs *fs, uint64_t blk)
{
	struct sufs_inode in;
	uint64_t p;
	unsigned i;

	for (i = 0; i < fs->nsnaps; i++)
		if (inode_load(fs, fs->snaps[i]->ino, &in) == 0 &&
		    bmap_get(fs, &in, blk, &p) == 0 && p == blk)
			return 1;
	return 0;
}

/* A block is being freed: a snapshot that needs it takes it.  1 if one did. */
int snap_claim(struct sufs_fs *fs, uint64_t blk)
{
	unsigned i;
	int claimed = 0;

	snap_begin(fs);
	for (i = 0; i < fs->nsnaps && !claimed; i++) {
		struct snap *s = fs->snaps[i];

		if (blk >= fs->sb.blocks_count || !need_test(s, blk))
			continue;
		need_clear(s, blk);
		if (snap_point(fs, s, blk, blk, NULL, NULL) == 0)
			claimed = 1;
		else
			snap_break(fs, s);
	}
	snap_end(fs);
	return claimed;
}

/* ---- loading ------------------------------------------------------------------ */

static int clear_mapped(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			int level, int bad, void *arg)
{
	struct snap *s = arg;

	(void)fs; (void)ino; (void)pblk;
	if (!bad && level == 0 && lblk < fs->sb.blocks_count)
		need_clear(s, lblk);
	return 0;
}

/* Read logical block lblk of a snapshot file into out (zeros for a hole). */
static int snap_read_lblk(struct sufs_fs *fs, const struct sufs_inode *in, uint64_t lblk,
			  uint8_t *out, int *hole)
{
	uint64_t p;
	struct buf *b;
	int err = bmap_get(fs, in, lblk, &p);

	if (err)
		return err;
	*hole = !p;
	if (!p) {
		memset(out, 0, fs->bsize);
		return 0;
	}
	if (!block_in_range(fs, p))
		return -SUFS_ECORRUPT;
	err = buf_get(fs, p, BUF_RAW, &b);
	if (err)
		return err;
	memcpy(out, b->data, fs->bsize);
	buf_put(fs, b);
	return 0;
}

const char *snap_file_problem(const struct sufs_fs *fs, const struct sufs_inode *in)
{
	if (!S_ISREG(in->mode))
		return "not a regular file";
	if (!(in->flags & SUFS_IFLAG_SNAPSHOT))
		return "no snapshot flag";
	if (in->size != fs->sb.blocks_count << fs->bshift)
		return "its size is not the file system's";
	return NULL;
}

/* Is slot i a snapshot this library can use?  Its inode, decoded. */
static int slot_inode(struct sufs_fs *fs, unsigned i, struct sufs_inode *in)
{
	uint32_t ino = fs->sb.snap[i].ino;
	int err;

	if (!ino)
		return -ENOENT;
	if (fs->sb.snap[i].flags & SUFS_SNAP_BROKEN)
		return -SUFS_ECORRUPT;
	if (!inode_valid_ino(fs, ino))
		return -SUFS_ECORRUPT;
	err = inode_load(fs, ino, in);
	if (err)
		return err;
	return snap_file_problem(fs, in) ? -SUFS_ECORRUPT : 0;
}

/* Build snapshot slot i's NEED bits: its copy of each block bitmap, less
 * what it has already copied or claimed. */
int snap_build(struct sufs_fs *fs, unsigned i, struct snap **out)
{
	struct sufs_group_layout l;
	struct sufs_inode in;
	struct snap *s;
	uint8_t *bm;
	uint64_t n, blk;
	uint32_t g;
	int err, hole;

	err = slot_inode(fs, i, &in);
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	bm = malloc(fs->bsize);
	if (!s || !bm || !(s->need = calloc((size_t)(fs->sb.blocks_count + 7) / 8, 1))) {
		free(bm);
		snap_free(s);
		return -ENOMEM;
	}
	s->slot = i;
	s->ino = fs->sb.snap[i].ino;
	for (g = 0; g < fs->sb.groups_count && !err; g++) {
		sufs_group_layout(&fs->sb, g, &l);
		err = snap_read_lblk(fs, &in, l.block_bitmap, bm, &hole);
		if (!err && hole)
			err = -SUFS_ECORRUPT; /* every snapshot holds every bitmap */
		for (blk = l.start; !err && blk < l.end; blk++) {
			n = blk - l.start;
			if ((bm[n >> 3] >> (n & 7)) & 1)
				s->need[blk >> 3] |= (uint8_t)(1u << (blk & 7));
		}
	}
	free(bm);
	if (!err)
		err = inode_walk(fs, s->ino, &in, clear_mapped, s);
	if (err) {
		snap_free(s);
		return err;
	}
	*out = s;
	return 0;
}

/* At open for writing: every usable snapshot, oldest first.  A slot that
 * is not usable is left to fsck (snap_slot_bad) and protects nothing. */
int snap_load(struct sufs_fs *fs)
{
	unsigned i, j;
	int err;

	snap_unload(fs);
	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		struct snap *s;

		/* a second slot naming the same file (fsck.sufs: snap_slot_dup)
		 * is not a second snapshot: its blocks would be copied twice */
		if (sb_snap_slot(fs, fs->sb.snap[i].ino) != (int)i)
			continue;
		err = snap_build(fs, i, &s);
		if (err == -ENOMEM)
			return err;
		if (err)
			continue;
		/* oldest first: claims go to the oldest that needs a block */
		for (j = fs->nsnaps; j > 0 &&
		     fs->sb.snap[fs->snaps[j - 1]->slot].time > fs->sb.snap[i].time; j--)
			fs->snaps[j] = fs->snaps[j - 1];
		fs->snaps[j] = s;
		fs->nsnaps++;
	}
	set_hooks(fs);
	return 0;
}

struct snap *snap_active(struct sufs_fs *fs, unsigned slot)
{
	unsigned i;

	for (i = 0; i < fs->nsnaps; i++)
		if (fs->snaps[i]->slot == slot)
			return fs->snaps[i];
	return NULL;
}

/* ---- names and slots ---------------------------------------------------------- */

static int valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > SUFS_NAME_MAX || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	return 0;
}

static int snapdir(struct sufs_fs *fs, uint32_t *dir)
{
	return sufs_lookup(fs, SUFS_ROOT_INO, snapdir_name, sizeof(snapdir_name) - 1, dir);
}

static int info_of(struct sufs_fs *fs, unsigned slot, const char *name,
		   struct sufs_snap_info *out)
{
	struct sufs_inode in;
	int err = inode_load(fs, fs->sb.snap[slot].ino, &in);

	if (err && err != -SUFS_ECHECKSUM)
		return err;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->slot = slot;
	out->ino = fs->sb.snap[slot].ino;
	out->time = fs->sb.snap[slot].time;
	out->blocks = in.blocks;
	out->broken = (fs->sb.snap[slot].flags & SUFS_SNAP_BROKEN) != 0;
	return 0;
}

struct list_ctx {
	struct sufs_fs *fs;
	struct sufs_snap_info *out;
	unsigned n;
	int err;
};

static int list_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct list_ctx *l = arg;
	char buf[SUFS_NAME_MAX + 1];
	int slot = sb_snap_slot(l->fs, ino);

	(void)ftype;
	if (slot < 0 || l->n == SUFS_SNAP_SLOTS)
		return 0;
	memcpy(buf, name, len);
	buf[len] = 0;
	l->err = info_of(l->fs, (unsigned)slot, buf, &l->out[l->n]);
	if (l->err)
		return 1;
	l->n++;
	return 0;
}

static int cmp_time(const void *a, const void *b)
{
	const struct sufs_snap_info *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

int sufs_snap_list(struct sufs_fs *fs, struct sufs_snap_info out[SUFS_SNAP_SLOTS], unsigned *n)
{
	struct list_ctx l = { fs, out, 0, 0 };
	uint32_t dir;
	unsigned i;
	int err;

	*n = 0;
	for (i = 0; i < SUFS_SNAP_SLOTS && !fs->sb.snap[i].ino; i++)
		;
	if (i == SUFS_SNAP_SLOTS)
		return 0;
	err = snapdir(fs, &dir);
	if (err == -ENOENT)
		return 0;
	if (!err)
		err = sufs_readdir(fs, dir, list_fn, &l);
	if (!err)
		err = l.err;
	if (err)
		return err;
	qsort(out, l.n, sizeof(*out), cmp_time);
	*n = l.n;
	return 0;
}

int sufs_snap_find(struct sufs_fs *fs, const char *name, struct sufs_snap_info *out)
{
	uint32_t dir, ino;
	int err = valid_name(name), slot;

	if (err)
		return err;
	err = snapdir(fs, &dir);
	if (!err)
		err = sufs_lookup(fs, dir, name, strlen(name), &ino);
	if (err == -ENOENT || (!err && (slot = sb_snap_slot(fs, ino)) < 0))
		return -SUFS_ENOTSNAP;
	if (err)
		return err;
	return info_of(fs, (unsigned)slot, name, out);
}

/* ---- taking one --------------------------------------------------------------- */

/* One block of metadata frozen when the snapshot is taken. */
struct frozen {
	uint64_t blk;
	uint8_t *data;
};

struct freeze {
	struct sufs_fs *fs;
	struct frozen *f;
	size_t n, cap;
	uint8_t **bitmaps;      /* per group: the block bitmap, expunged (in f) */
	uint64_t *expunged;     /* per group: blocks of snapshot files */
};

static int frozen_add(struct freeze *z, uint64_t blk, uint8_t **data)
{
	size_t i;

	for (i = 0; i < z->n; i++) {
		if (z->f[i].blk == blk) {
			*data = z->f[i].data;
			return 0;
		}
	}
	if (z->n == z->cap) {
		size_t cap = z->cap ? 2 * z->cap : 64;
		struct frozen *p = realloc(z->f, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		z->f = p;
		z->cap = cap;
	}
	if (!(*data = malloc(z->fs->bsize)))
		return -ENOMEM;
	z->f[z->n].blk = blk;
	z->f[z->n++].data = *data;
	return 0;
}

/*
 * Block blk as the disk has it, when its buffer holds nothing newer: the
 * buffer's bytes with their checksums sealed (the cache seals only write
 * images, so a buffer's own checksums may be stale).
 */
int snap_read_live(struct sufs_fs *fs, uint64_t blk, uint8_t *out)
{
	struct buf *b = cache_lookup(fs, blk);

	if (b) {
		memcpy(out, b->data, fs->bsize);
		cache_seal(fs, b, out);
		return 0;
	}
	return sufs_dev_read(fs->dev, blk << fs->bshift, out, fs->bsize);
}

static int expunge_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		      int level, int bad, void *arg)
{
	struct freeze *z = arg;
	uint32_t g;
	uint64_t n;

	(void)ino; (void)lblk; (void)level;
	if (bad)
		return -SUFS_ECORRUPT; /* what it should leave out is unknown */
	g = (uint32_t)(pblk / fs->sb.blocks_per_group);
	n = pblk % fs->sb.blocks_per_group;
	if ((z->bitmaps[g][n >> 3] >> (n & 7)) & 1) {
		z->bitmaps[g][n >> 3] &= (uint8_t)~(1u << (n & 7));
		z->expunged[g]++;
	}
	return 0;
}

/* A snapshot file as every snapshot shows it: empty. */
static int expunge_inode(struct freeze *z, uint32_t ino)
{
	struct sufs_fs *fs = z->fs;
	struct sufs_inode in;
	uint32_t g = (ino - 1) / fs->sb.inodes_per_group;
	uint32_t idx = (ino - 1) % fs->sb.inodes_per_group;
	struct sufs_group_layout l;
	uint64_t blk;
	uint8_t *data, *raw;
	int err = inode_load(fs, ino, &in);

	if (err)
		return err;
	err = inode_walk(fs, ino, &in, expunge_fn, z);
	if (err)
		return err;
	sufs_group_layout(&fs->sb, g, &l);
	blk = l.inode_table + idx / fs->inodes_per_block;
	err = frozen_add(z, blk, &data); /* there already: freeze() read it */
	if (err)
		return err;
	raw = data + (idx % fs->inodes_per_block) * SUFS_INODE_SIZE;
	in.size = 0;
	in.blocks = 0;
	in.flags &= (uint16_t)~SUFS_IFLAG_SNAPSHOT;
	memset(in.block, 0, sizeof(in.block));
	sufs_inode_encode(&in, ino, raw);
	return 0;
}

static void freeze_free(struct freeze *z)
{
	size_t i;

	for (i = 0; i < z->n; i++)
		free(z->f[i].data);
	free(z->f);
	free(z->bitmaps); /* its blocks are in the list */
	free(z->expunged);
}

/*
 * The metadata the snapshot holds from the start, as it must read there:
 * block bitmaps without snapshot files' blocks, inode table blocks with
 * snapshot inodes empty, group descriptors and superblocks (primary and
 * backups) with the summaries to match and no slots.  The superblock and
 * descriptors are written outside the cache, so they are never copied on
 * write: copying them now is what protects them.
 */
static int freeze(struct freeze *z, uint32_t new_ino)
{
	struct sufs_fs *fs = z->fs;
	uint32_t ngroups = fs->sb.groups_count, per = fs->bsize / SUFS_GROUP_DESC_SIZE, g, i;
	struct sufs_group_layout l;
	struct sufs_super sb = fs->sb;
	uint8_t *data, raw[SUFS_SB_SIZE];
	uint64_t sb_blk = SUFS_SB_OFFSET / fs->bsize, total = 0;
	int err = 0;

	z->bitmaps = calloc(ngroups, sizeof(*z->bitmaps));
	z->expunged = calloc(ngroups, sizeof(*z->expunged));
	if (!z->bitmaps || !z->expunged)
		return -ENOMEM;
	for (g = 0; g < ngroups && !err; g++) {
		sufs_group_layout(&fs->sb, g, &l);
		err = frozen_add(z, l.block_bitmap, &z->bitmaps[g]);
		if (!err)
			err = snap_read_live(fs, l.block_bitmap, z->bitmaps[g]);
	}
	/* the inode table blocks: read first, then expunged */
	for (i = 0; i < SUFS_SNAP_SLOTS + 1 && !err; i++) {
		uint32_t ino = i < SUFS_SNAP_SLOTS ? fs->sb.snap[i].ino : new_ino;
		size_t before = z->n;
		if (!ino || !inode_valid_ino(fs, ino))
			continue;
		g = (ino - 1) / fs->sb.inodes_per_group;
		sufs_group_layout(&fs->sb, g, &l);
		err = frozen_add(z, l.inode_table + ((ino - 1) % fs->sb.inodes_per_group) /
						    fs->inodes_per_block, &data);
		if (!err && z->n > before)
			err = snap_read_live(fs, z->f[z->n - 1].blk, data);
		if (!err)
			err = expunge_inode(z, ino);
	}
	if (err)
		return err;
	/* the summaries the view has: expunged blocks are free there */
	for (g = 0; g < ngroups; g++)
		total += z->expunged[g];
	sb.free_blocks += total;
	memset(sb.snap, 0, sizeof(sb.snap));
	/* everything was just written back: the view is as clean as the
	 * image was when it was opened (a crash before that left leaks) */
	if (fs->was_clean)
		sb.state |= SUFS_STATE_CLEAN;
	for (i = 0; i < sb.gdt_blocks && !err; i++) {
		sufs_group_layout(&fs->sb, 0, &l);
		err = frozen_add(z, l.gdt_start + i, &data);
		if (err)
			break;
		memset(data, 0, fs->bsize);
		for (g = i * per; g < ngroups && g < (i + 1) * per; g++) {
			struct sufs_group gd = fs->groups[g];
			gd.free_blocks += (uint32_t)z->expunged[g];
			sufs_group_encode(&gd, g, data + (g - i * per) * SUFS_GROUP_DESC_SIZE);
		}
	}
	for (g = 0; g < ngroups && !err; g++) {
		uint64_t blk, off;
		if (g == 0) {
			blk = sb_blk;
			off = SUFS_SB_OFFSET - sb_blk * fs->bsize;
		} else if (sufs_group_has_backup(g)) {
			blk = (uint64_t)g * fs->sb.blocks_per_group;
			off = 0;
		} else {
			continue;
		}
		err = frozen_add(z, blk, &data);
		if (!err)
			err = snap_read_live(fs, blk, data);
		if (err)
			break;
		sb.sb_group = g;
		sufs_super_encode(&sb, raw);
		memcpy(data + off, raw, sizeof(raw));
	}
	return err;
}

static int free_slot(struct sufs_fs *fs, unsigned *slot)
{
	unsigned i;

	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		if (!fs->sb.snap[i].ino) {
			*slot = i;
			return 0;
		}
	}
	return -SUFS_ENOSLOT;
}

static int make_file(struct sufs_fs *fs, const char *name, uint32_t *ino)
{
	struct sufs_cred cred = { 0, 0 };
	struct sufs_inode in;
	uint32_t dir;
	int err = snapdir(fs, &dir);

	if (err == -ENOENT)
		err = sufs_mkdir(fs, SUFS_ROOT_INO, snapdir_name, sizeof(snapdir_name) - 1, 0755,
				 &cred, &dir);
	if (!err) {
		err = sufs_lookup(fs, dir, name, strlen(name), ino);
		if (!err)
			return -EEXIST;
		if (err == -ENOENT)
			err = sufs_create(fs, dir, name, strlen(name), 0400, &cred, ino);
	}
	if (!err)
		err = inode_load(fs, *ino, &in);
	if (!err) {
		in.flags |= SUFS_IFLAG_SNAPSHOT;
		in.size = fs->sb.blocks_count << fs->bshift;
		err = inode_store(fs, *ino, &in, UPD_INODEDEP, NULL, NULL);
	}
	return fs_op_end(fs, err);
}

int sufs_snap_create(struct sufs_fs *fs, const char *name, struct sufs_snap_info *out)
{
	struct freeze z = { fs, NULL, 0, 0, NULL, NULL };
	struct snap *s = NULL;
	unsigned slot = 0;
	uint32_t ino = 0, dir;
	int err, activated = 0;
	size_t i;

	if (!(fs->flags & SUFS_OPEN_RDWR))
		return -EROFS;
	err = valid_name(name);
	if (!err)
		err = free_slot(fs, &slot);
	if (!err)
		err = sufs_sync(fs);
	if (!err)
		err = make_file(fs, name, &ino);
	if (err)
		return err;
	err = sufs_sync(fs); /* the moment the snapshot stands for */
	if (!err)
		err = freeze(&z, ino);
	if (!err) {
		s = calloc(1, sizeof(*s));
		if (!s || !(s->need = calloc((size_t)(fs->sb.blocks_count + 7) / 8, 1)))
			err = -ENOMEM;
	}
	if (!err) {
		struct sufs_group_layout l;
		uint32_t g;
		uint64_t blk, n;

		s->slot = slot;
		s->ino = ino;
		for (g = 0; g < fs->sb.groups_count; g++) {
			sufs_group_layout(&fs->sb, g, &l);
			for (blk = l.start; blk < l.end; blk++) {
				n = blk - l.start;
				if ((z.bitmaps[g][n >> 3] >> (n & 7)) & 1)
					s->need[blk >> 3] |= (uint8_t)(1u << (blk & 7));
			}
		}
		for (i = 0; i < z.n; i++)
			need_clear(s, z.f[i].blk);
		/* from here on every change is copied first */
		fs->snaps[fs->nsnaps++] = s;
		set_hooks(fs);
		activated = 1;
		for (i = 0; i < z.n && !err; i++)
			err = snap_copy(fs, s, z.f[i].blk, z.f[i].data, NULL);
		s = NULL;
		err = fs_op_end(fs, err);
	}
	if (!err)
		err = sufs_sync(fs);
	if (!err) {
		/* the snapshot exists once its slot is on disk */
		fs->sb.snap[slot].ino = ino;
		fs->sb.snap[slot].flags = 0;
		fs_now(fs, &fs->sb.snap[slot].time, &(uint32_t){ 0 });
		err = fs_write_super(fs, 0);
		if (!err)
			err = sufs_dev_barrier(fs->dev);
		if (err)
			memset(&fs->sb.snap[slot], 0, sizeof(fs->sb.snap[slot]));
	}
	snap_free(s);
	freeze_free(&z);
	if (err) {
		/* not a snapshot: remove what was made of it (a crash would leave
		 * a plain file, which sufs_snap_delete() removes) */
		if (activated)
			snap_remove_active(fs, slot);
		if (snapdir(fs, &dir) == 0)
			sufs_unlink(fs, dir, name, strlen(name));
		return err;
	}
	return out ? info_of(fs, slot, name, out) : 0;
}

/* ---- deleting one ------------------------------------------------------------- */

int sufs_snap_delete(struct sufs_fs *fs, const char *name)
{
	uint32_t dir, ino;
	int err, slot;

	if (!(fs->flags & SUFS_OPEN_RDWR))
		return -EROFS;
	err = valid_name(name);
	if (!err)
		err = snapdir(fs, &dir);
	if (!err)
		err = sufs_lookup(fs, dir, name, strlen(name), &ino);
	if (err == -ENOENT)
		return -SUFS_ENOTSNAP;
	if (err)
		return err;
	slot = sb_snap_slot(fs, ino);
	/* two slots name it (damage): clearing one would leave the other
	 * naming a file removed */
	if (slot >= 0 && slot_dup(fs, (unsigned)slot))
		return -SUFS_ECORRUPT;
	if (slot >= 0) {
		/* the snapshot is gone once its slot is cleared on disk; a crash
		 * after that leaves a plain file, which deleting again removes */
		err = sufs_sync(fs);
		if (err)
			return err;
		memset(&fs->sb.snap[slot], 0, sizeof(fs->sb.snap[slot]));
		err = fs_write_super(fs, 0);
		if (!err)
			err = sufs_dev_barrier(fs->dev);
		if (err)
			return err;
		snap_remove_active(fs, (unsigned)slot);
	} else {
		struct sufs_inode in;
		err = inode_load(fs, ino, &in);
		if (err)
			return err;
		if (!(in.flags & SUFS_IFLAG_SNAPSHOT))
			return -SUFS_ENOTSNAP; /* a user's file: not ours to remove */
	}
	/* its blocks go back through free_block(): a snapshot that needs one
	 * it claimed takes it over */
	err = sufs_unlink(fs, dir, name, strlen(name));
	if (!err)
		err = sufs_sync(fs);
	return err;
}

/*
 * A snapshot file that no slot names (a crash while one was taken or
 * deleted, fsck.sufs's snap_orphan) goes, its name (name in dir; dir 0:
 * it has none) with it, if it still is such a file named so.  0 when there
 * was nothing to do.
 */
int snap_remove_orphan(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name)
{
	struct sufs_inode in;
	uint32_t named;

	if (sb_snap_slot(fs, ino) >= 0 || inode_load(fs, ino, &in) || !(in.flags & SUFS_IFLAG_SNAPSHOT) ||
	    !S_ISREG(in.mode))
		return 0;
	if (!dir)
		return in.links <= 1 ? ops_release_inode(fs, ino) : 0;
	if (sufs_lookup(fs, dir, name, strlen(name), &named) || named != ino)
		return 0;
	return sufs_unlink(fs, dir, name, strlen(name));
}

