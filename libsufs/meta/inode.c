/*
 * inode.c - inodes in their tables, and block maps: 12 direct pointers,
 * then single, double and triple indirect blocks of 64-bit pointers.
 *
 * Every pointer read from disk is range-checked before it is followed: a
 * pointer outside the data area of the image is corruption, reported as
 * -SUFS_ECORRUPT, never a read out of bounds.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

int inode_valid_ino(struct sufs_fs *fs, uint32_t ino)
{
	return ino >= 1 && ino <= fs->sb.inodes_count;
}

static int inode_locate(struct sufs_fs *fs, uint32_t ino, uint64_t *blk, uint32_t *off)
{
	struct sufs_group_layout l;
	uint32_t g, idx;

	if (!inode_valid_ino(fs, ino))
		return -EINVAL;
	g = (ino - 1) / fs->sb.inodes_per_group;
	idx = (ino - 1) % fs->sb.inodes_per_group;
	sufs_group_layout(&fs->sb, g, &l);
	*blk = l.inode_table + idx / fs->inodes_per_block;
	*off = (idx % fs->inodes_per_block) * SUFS_INODE_SIZE;
	return 0;
}

/* The cached inode-table block that holds ino, and where in it. */
static int inode_buf(struct sufs_fs *fs, uint32_t ino, struct buf **b, uint32_t *off)
{
	uint64_t blk;
	int err = inode_locate(fs, ino, &blk, off);

	return err ? err : buf_get(fs, blk, BUF_ITABLE, b);
}

/*
 * Are all the inodes of b, the first of which is ino0, zero or whole?  The
 * checksums of a block are checked once, at the first load from it, not
 * at every load: a path lookup loads each inode on the path.
 */
static int inodes_good(struct sufs_fs *fs, struct buf *b, uint32_t ino0)
{
	const uint8_t *raw;
	uint32_t i;

	if (b->inodes_ok == INODES_UNKNOWN) {
		b->inodes_ok = INODES_GOOD;
		for (i = 0; i < fs->inodes_per_block; i++) {
			raw = b->data + i * SUFS_INODE_SIZE;
			if (!sufs_inode_is_zero(raw) && !inode_csum_ok(raw, ino0 + i)) {
				b->inodes_ok = INODES_SOME_BAD;
				break;
			}
		}
	}
	return b->inodes_ok == INODES_GOOD;
}

/* Read an inode; a checksum failure is an error unless the file system was
 * opened with SUFS_OPEN_IGNORE_CSUM, or strict asks for it anyway. */
static int load(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, int strict)
{
	struct buf *b;
	uint32_t off;
	int err = inode_buf(fs, ino, &b, &off);
	const uint8_t *raw;

	if (err)
		return err;
	raw = b->data + off;
	sufs_inode_decode(raw, in);
	if (!(fs->sb.features_ro_compat & SUFS_FEATURE_RO_XATTR)) {
		/* reserved bytes without the feature: zeros whenever written */
		in->xattr_block = 0;
		memset(in->xattr, 0, sizeof(in->xattr));
	}
	if (!inodes_good(fs, b, ino - off / SUFS_INODE_SIZE) && !sufs_inode_is_zero(raw) &&
	    in->checksum != sufs_inode_csum(raw, ino) &&
	    (strict || !(fs->flags & SUFS_OPEN_IGNORE_CSUM)))
		err = -SUFS_ECHECKSUM;
	buf_put(fs, b);
	return err;
}

int inode_load(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in)
{
	return load(fs, ino, in, 0);
}

/*
 * The ordered parts of an inode: what fsck reads to decide what an inode
 * is and owns.  The block count (a summary), the timestamps and the
 * checksum (sealed at write time) go out as they stand.  A link count is
 * a counter (buf_count()): its raises and lowers, each waiting for its
 * own name or "..", never wait for each other.  (A directory's once did:
 * that ordered the moves through one parent, a chain as long as the moves
 * pending.  What it also did, keep a directory renamed again from showing
 * three names, rename does itself: moved_settle() in ops/names.c.)  A part
 * is stored as an update of the bytes that changed; the extended
 * attributes, a list whose every entry is found through the ones before
 * it, as an update of the whole part (whole), so that no write shows one
 * change of the list without those before it.
 */
static const struct { uint32_t off, end; int whole; } ordered[5] = {
	{ IN_MODE, IN_LINKS, 0 },            /* mode, flags */
	{ IN_LINKS, IN_UID, 0 },             /* links: a counter */
	{ IN_UID, IN_BLOCKS, 0 },            /* uid, gid, size */
	{ IN_GENERATION, IN_XATTR_BLOCK, 0 }, /* generation, rdev, block pointers */
	{ IN_XATTR_BLOCK, IN_CSUM, 1 },      /* the attribute block, the attributes */
};
#define ORDERED_LINKS 1

/* The label of part k's update in a store of the given kind. */
static enum upd_kind part_kind(unsigned k, enum upd_kind kind)
{
	if (kind != UPD_INODEDEP || k < 3)
		return kind;
	return k == 3 ? UPD_ALLOCDIRECT : UPD_EXTATTR;
}

/* The first byte of [lo, hi) where a and b differ, or hi: eight at a
 * time while they agree. */
static uint32_t first_diff(const uint8_t *a, const uint8_t *b, uint32_t lo, uint32_t hi)
{
	while (lo + 8 <= hi && memcmp(a + lo, b + lo, 8) == 0)
		lo += 8;
	while (lo < hi && a[lo] == b[lo])
		lo++;
	return lo;
}

/* One past the last byte of [lo, hi) where a and b differ, or lo. */
static uint32_t last_diff(const uint8_t *a, const uint8_t *b, uint32_t lo, uint32_t hi)
{
	while (hi >= lo + 8 && memcmp(a + hi - 8, b + hi - 8, 8) == 0)
		hi -= 8;
	while (hi > lo && a[hi - 1] == b[hi - 1])
		hi--;
	return hi;
}

/*
 * Store an inode.  The change becomes updates of the ordered parts that
 * changed, the first waiting for w and each other for the one before it (a
 * new or zeroed inode: one update of all of it); the rest is a plain
 * change.  kind labels them; an inodedep store labels its block pointers
 * allocdirect and its attributes extattr.
 * *id (if not NULL) is an update that, once on disk, means all of this
 * store is.
 */
int inode_store(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
		enum upd_kind kind, const struct waits *w, upd_id *id)
{
	uint8_t raw[SUFS_INODE_SIZE], *old;
	struct waits w2;
	struct buf *b;
	uint32_t off, lo, hi, k;
	upd_id last = 0;
	int err = inode_buf(fs, ino, &b, &off);
	uint8_t ok;

	if (err)
		return err;
	ok = b->inodes_ok; /* the updates below forget it; the new inode is whole */
	old = b->data + off;
	sufs_inode_encode(in, ino, raw);
	if (sufs_inode_is_zero(old) || sufs_inode_is_zero(raw)) {
		/* made or zeroed: all of it in one update, never half */
		last = buf_update(fs, b, off, SUFS_INODE_SIZE, kind, w);
	} else {
		w2 = w ? *w : (struct waits){ 0 };
		for (k = 0; k < 5; k++) {
			lo = first_diff(raw, old, ordered[k].off, ordered[k].end);
			hi = last_diff(raw, old, lo, ordered[k].end);
			if (lo == hi)
				continue;
			if (ordered[k].whole) {
				lo = ordered[k].off;
				hi = ordered[k].end;
			}
			if (last) /* which waits for w: that is enough */
				w2 = (struct waits){ .n = 1, .id = { last } };
			if (k == ORDERED_LINKS)
				last = buf_count(fs, b, off + IN_LINKS, IN_UID - IN_LINKS,
						 (int32_t)(get32(raw + IN_LINKS) - get32(old + IN_LINKS)),
						 kind, &w2);
			else
				last = buf_update(fs, b, off + lo, hi - lo, part_kind(k, kind), &w2);
		}
		if (memcmp(raw, old, SUFS_INODE_SIZE) != 0)
			buf_touch(fs, b);
	}
	memcpy(old, raw, SUFS_INODE_SIZE);
	b->inodes_ok = ok;
	buf_put(fs, b);
	if (id)
		*id = last;
	return 0;
}

/*
 * Zero an inode that never reached the disk, with no update to order:
 * its making and every later change of it are forgotten (deps_forget_new)
 * when only names wait for them, and no name of it can reach the disk
 * any more.  Returns 1 when done, 0 when the inode must be zeroed by the
 * rules (it may be on disk), or a negative error.
 */
int inode_forget_new(struct sufs_fs *fs, uint32_t ino)
{
	struct buf *b;
	uint32_t off;
	int err = inode_buf(fs, ino, &b, &off);

	if (err)
		return err;
	err = deps_forget_new(fs, b, off, SUFS_INODE_SIZE, BUF_DIR, DE_INO + 4);
	if (err == 1)
		memset(b->data + off, 0, SUFS_INODE_SIZE);
	buf_put(fs, b);
	return err;
}

/*
 * A file going whose inode is on disk, but some of whose block pointers
 * are not: a pointer still pending that was zero on disk names a block
 * (and, for an indirect one, a tree) that no pointer on disk ever named.
 * Take back the pending changes of its size and pointers (deps_take_back())
 * when each pointer they changed was zero before them, and set bit i of
 * *fresh for each slot i of in's block[] so found: its blocks can be
 * freed at once, their data never written.  Returns 1 when taken back,
 * 0 when not (nothing fresh, or a pointer that changed from another
 * block: a truncate's, whose free waits), or a negative error.
 */
int inode_forget_blocks(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
			unsigned *fresh)
{
	uint8_t raw[SUFS_INODE_SIZE];
	struct sufs_inode disk;
	struct buf *b;
	uint32_t off, i;
	unsigned mask = 0;
	int err = inode_buf(fs, ino, &b, &off), rc;

	if (err)
		return err;
	memcpy(raw, b->data + off, SUFS_INODE_SIZE);
	rc = deps_take_back(fs, b, off + IN_UID, IN_XATTR_BLOCK - IN_UID, raw + IN_UID, 0);
	if (rc == 1) {
		sufs_inode_decode(raw, &disk);
		for (i = 0; i < SUFS_NBLOCKS; i++) {
			if (disk.block[i] == in->block[i])
				continue;
			if (disk.block[i]) {
				mask = 0; /* not a fresh pointer: leave it all to the rules */
				break;
			}
			mask |= 1u << i;
		}
	}
	rc = mask ? deps_take_back(fs, b, off + IN_UID, IN_XATTR_BLOCK - IN_UID, raw + IN_UID, 1) : 0;
	buf_put(fs, b);
	*fresh = rc == 1 ? mask : 0;
	return rc;
}

int sufs_inode_get(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *out)
{
	return load(fs, ino, out, 1);
}

int sufs_inode_put(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in)
{
	if (!(fs->flags & SUFS_OPEN_RDWR))
		return -EROFS;
	return fs_op_end(fs, inode_store(fs, ino, in, UPD_INODEDEP, NULL, NULL));
}

/* Regular files, directories and long symlinks map blocks; the rest keep
 * something else (or nothing) in block[]. */
int inode_has_blocks(const struct sufs_inode *in)
{
	switch (in->mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
		return 1;
	case S_IFLNK:
		return in->size > SUFS_FAST_SYMLINK_MAX;
	}
	return 0;
}

uint64_t inode_max_blocks(struct sufs_fs *fs)
{
	uint64_t p = fs->ptrs;
	return SUFS_NDIR + p + p * p + p * p * p;
}

/* The slot indexes leading to logical block lblk: idx[0] in the inode,
 * idx[1..depth] in indirect blocks. */
static int bmap_path(struct sufs_fs *fs, uint64_t lblk, int *depth, uint32_t idx[4])
{
	uint64_t p = fs->ptrs;

	if (lblk < SUFS_NDIR) {
		*depth = 0;
		idx[0] = (uint32_t)lblk;
		return 0;
	}
	lblk -= SUFS_NDIR;
	if (lblk < p) {
		*depth = 1;
		idx[0] = SUFS_IND;
		idx[1] = (uint32_t)lblk;
		return 0;
	}
	lblk -= p;
	if (lblk < p * p) {
		*depth = 2;
		idx[0] = SUFS_DIND;
		idx[1] = (uint32_t)(lblk / p);
		idx[2] = (uint32_t)(lblk % p);
		return 0;
	}
	lblk -= p * p;
	if (lblk < p * p * p) {
		*depth = 3;
		idx[0] = SUFS_TIND;
		idx[1] = (uint32_t)(lblk / (p * p));
		idx[2] = (uint32_t)(lblk / p % p);
		idx[3] = (uint32_t)(lblk % p);
		return 0;
	}
	return -EFBIG;
}

/* Follow the path idx from the inode down, reading at most `levels`
 * indirect blocks: *ptr is the last pointer read (0: a hole there) and
 * *level one more than the levels read.  0, or an error. */
static int bmap_walk(struct sufs_fs *fs, const struct sufs_inode *in, const uint32_t idx[4],
		     int levels, uint64_t *ptr, int *level)
{
	struct buf *b;
	int err;

	*ptr = in->block[idx[0]];
	for (*level = 1; *level <= levels && *ptr; ++*level) {
		if (!block_in_range(fs, *ptr))
			return -SUFS_ECORRUPT;
		err = buf_get(fs, *ptr, BUF_IND, &b);
		if (err)
			return err;
		*ptr = get64(b->data + IND_PTR(idx[*level]));
		buf_put(fs, b);
	}
	return 0;
}

int bmap_get(struct sufs_fs *fs, const struct sufs_inode *in, uint64_t lblk, uint64_t *pblk)
{
	uint32_t idx[4];
	int depth, level, err;
	uint64_t ptr;

	*pblk = 0;
	err = bmap_path(fs, lblk, &depth, idx);
	if (err)
		return err == -EFBIG ? 0 : err; /* past the largest file: a hole */
	err = bmap_walk(fs, in, idx, depth, &ptr, &level);
	if (err)
		return err;
	if (ptr && !block_in_range(fs, ptr))
		return -SUFS_ECORRUPT;
	*pblk = ptr;
	return 0;
}

/*
 * Is there room to map logical block lblk, a hole: the indirect blocks
 * missing on its path and `more` blocks besides (the data block)?  0, or
 * -ENOSPC before anything is allocated, so that a write that cannot be
 * made leaves no indirect block behind that maps nothing past the size.
 */
int bmap_room(struct sufs_fs *fs, const struct sufs_inode *in, uint64_t lblk, unsigned more)
{
	uint32_t idx[4];
	int depth, level, err;
	uint64_t ptr, need = more;

	err = bmap_path(fs, lblk, &depth, idx);
	if (err)
		return err;
	if (depth) {
		/* the indirect blocks only: the last pointer is lblk's own */
		err = bmap_walk(fs, in, idx, depth - 1, &ptr, &level);
		if (err)
			return err;
		/* the levels from the first missing one down */
		if (!ptr)
			need += (uint64_t)(depth - level + 1);
	}
	return alloc_room(fs, need);
}

int sufs_bmap(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t *pblk)
{
	struct sufs_inode in;
	int err = inode_load(fs, ino, &in);

	if (err)
		return err;
	if (!inode_has_blocks(&in)) {
		*pblk = 0;
		return 0;
	}
	return bmap_get(fs, &in, lblk, pblk);
}

/* A first guess for a new inode's first block: the start of its group's data. */
uint64_t inode_goal(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_group_layout l;
	sufs_group_layout(&fs->sb, (ino - 1) / fs->sb.inodes_per_group, &l);
	return l.first_data;
}

/*
 * A new block near goal, zero-filled in the cache, its contents one update
 * that waits for nothing (so it keeps no old bytes).  Into w go what a
 * pointer to it must wait for: its bitmap bit and its contents (rule 1).
 * The caller may fill the buffer further (its changes merge into that
 * update) and must buf_put() it.
 */
int block_new(struct sufs_fs *fs, uint64_t goal, enum buf_type type, enum upd_kind kind,
	      uint64_t *blk, struct buf **out, struct waits *w)
{
	int meta = type == BUF_IND || type == BUF_DIR || type == BUF_XATTR;
	upd_id bit;
	int err = alloc_block(fs, meta ? meta_goal(fs, goal) : goal, meta, blk, &bit);

	if (err)
		return err;
	err = buf_get_new(fs, *blk, type, out);
	if (err)
		return err; /* the bit stays set: a leak, never a double use */
	waits_add(w, bit);
	waits_add(w, buf_update(fs, *out, 0, fs->bsize, kind, NULL));
	return 0;
}

/*
 * Make pblk the block of logical block lblk, a hole until now.  The
 * pointer waits for pw (the block's bitmap bit and contents).  Indirect
 * blocks missing on the path are made here, near goal, and pointers to
 * them wait for them; with pblk 0 only the path is made (so that indirect
 * blocks come before the data they map).  A pointer that lands in the
 * inode itself is set in *in, and what it waits for is added to iw: the
 * caller stores the inode with iw.  Into path (if not NULL) go the updates
 * that set pointers in indirect blocks on the way, the last one's
 * included: once they and the inode's store are on disk, so is the path.
 */
int bmap_set(struct sufs_fs *fs, struct sufs_inode *in, uint64_t lblk, uint64_t pblk,
	     uint64_t goal, const struct waits *pw, struct waits *iw, struct waits *path)
{
	uint32_t idx[4];
	int depth, level, err;
	uint64_t ptr, child;
	struct waits cw;
	struct buf *b, *nb;
	unsigned i;
	upd_id id;

	err = bmap_path(fs, lblk, &depth, idx);
	if (err)
		return err;
	if (depth == 0) {
		if (!pblk)
			return 0;
		in->block[idx[0]] = pblk;
		in->blocks++;
		for (i = 0; i < pw->n; i++)
			waits_add(iw, pw->id[i]);
		return 0;
	}
	ptr = in->block[idx[0]];
	if (!ptr) {
		cw = (struct waits){ 0 };
		err = block_new(fs, goal, BUF_IND, UPD_INDIRDEP, &ptr, &nb, &cw);
		if (err)
			return err;
		buf_put(fs, nb);
		in->block[idx[0]] = ptr;
		in->blocks++;
		for (i = 0; i < cw.n; i++)
			waits_add(iw, cw.id[i]);
	}
	for (level = 1; level <= depth; level++) {
		if (!block_in_range(fs, ptr))
			return -SUFS_ECORRUPT;
		err = buf_get(fs, ptr, BUF_IND, &b);
		if (err)
			return err;
		child = get64(b->data + IND_PTR(idx[level]));
		if (level == depth && !pblk) {
			/* only the path was asked for */
		} else if (level == depth) {
			if (child) {
				buf_put(fs, b);
				return -EEXIST;
			}
			id = buf_update(fs, b, IND_PTR(idx[level]), 8, UPD_ALLOCINDIR, pw);
			if (path)
				waits_add(path, id);
			put64(b->data + IND_PTR(idx[level]), pblk);
			in->blocks++;
		} else if (!child) {
			cw = (struct waits){ 0 };
			err = block_new(fs, ptr + 1, BUF_IND, UPD_INDIRDEP, &child, &nb, &cw);
			if (err) {
				buf_put(fs, b);
				return err;
			}
			buf_put(fs, nb);
			id = buf_update(fs, b, IND_PTR(idx[level]), 8, UPD_ALLOCINDIR, &cw);
			if (path)
				waits_add(path, id);
			put64(b->data + IND_PTR(idx[level]), child);
			in->blocks++;
		}
		buf_put(fs, b);
		ptr = child;
	}
	return 0;
}

/*
 * Into w, whatever is still pending on the way to logical block lblk of
 * inode ino (in): the newest update of each pointer on the path, from the
 * inode's own down to lblk's.  Once they are on disk, so is the path, and
 * (pointers waiting for what they point to) what it leads to.
 */
int bmap_path_waits(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
		    uint64_t lblk, struct waits *w)
{
	uint32_t idx[4], off;
	uint64_t blk, ptr;
	int depth, level, err;
	struct buf *b;

	err = bmap_path(fs, lblk, &depth, idx);
	if (!err)
		err = inode_locate(fs, ino, &blk, &off);
	if (err)
		return err;
	err = buf_get(fs, blk, BUF_ITABLE, &b);
	if (err)
		return err;
	waits_add(w, deps_last_over(b, off + IN_BLOCK_PTR(idx[0]), 8));
	buf_put(fs, b);
	ptr = in->block[idx[0]];
	for (level = 1; level <= depth && ptr && !err; level++) {
		if (!block_in_range(fs, ptr))
			return -SUFS_ECORRUPT;
		err = buf_get(fs, ptr, BUF_IND, &b);
		if (err)
			return err;
		waits_add(w, deps_last_over(b, IND_PTR(idx[level]), 8));
		ptr = get64(b->data + IND_PTR(idx[level]));
		buf_put(fs, b);
	}
	return err;
}

struct walk {
	struct sufs_fs *fs;
	uint32_t ino;
	sufs_block_fn fn;
	void *arg;
};

/* Visit the tree under pointer ptr at the given level (0: a data block),
 * mapping logical blocks from lblk on. */
static int walk_tree(struct walk *w, uint64_t ptr, int level, uint64_t lblk)
{
	struct sufs_fs *fs = w->fs;
	uint64_t span = 1, child;
	uint32_t i;
	uint8_t *copy;
	struct buf *b;
	int rc;

	if (!block_in_range(fs, ptr))
		return w->fn(fs, w->ino, lblk, ptr, level, 1, w->arg);
	if (level == 0)
		return w->fn(fs, w->ino, lblk, ptr, level, 0, w->arg);
	for (i = 1; i < (uint32_t)level; i++)
		span *= fs->ptrs;
	/* copy the pointers before the callback sees the block: it may use the
	 * cache and evict it, or free it (fsck), and a freed block's buffer is
	 * forgotten, even with changes that never reached the disk */
	copy = malloc(fs->bsize);
	if (!copy)
		return -ENOMEM;
	rc = buf_get(fs, ptr, BUF_IND, &b);
	if (rc) {
		free(copy);
		return rc;
	}
	memcpy(copy, b->data, fs->bsize);
	buf_put(fs, b);
	rc = w->fn(fs, w->ino, lblk, ptr, level, 0, w->arg);
	for (i = 0; i < fs->ptrs && !rc; i++) {
		child = get64(copy + IND_PTR(i));
		if (child)
			rc = walk_tree(w, child, level - 1, lblk + i * span);
	}
	free(copy);
	return rc;
}

/* Visit every block the given inode maps (it need not be stored). */
int inode_walk(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in, sufs_block_fn fn,
	       void *arg)
{
	struct walk w = { fs, ino, fn, arg };
	uint64_t p = fs->ptrs, first[3] = { SUFS_NDIR, SUFS_NDIR + p, SUFS_NDIR + p + p * p };
	uint32_t i;
	int rc = 0;

	if (!inode_has_blocks(in))
		return 0;
	for (i = 0; i < SUFS_NDIR && !rc; i++)
		if (in->block[i])
			rc = walk_tree(&w, in->block[i], 0, i);
	for (i = 0; i < 3 && !rc; i++)
		if (in->block[SUFS_IND + i])
			rc = walk_tree(&w, in->block[SUFS_IND + i], (int)i + 1, first[i]);
	return rc;
}

int sufs_block_iterate(struct sufs_fs *fs, uint32_t ino, sufs_block_fn fn, void *arg)
{
	struct sufs_inode in;
	int rc = inode_load(fs, ino, &in);

	return rc ? rc : inode_walk(fs, ino, &in, fn, arg);
}
