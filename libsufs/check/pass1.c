/*
 * pass1.c - pass 1: every inode, its mode, its size and its block map.
 *
 * The inode tables are read in order, a block at a time; a block of inodes
 * never used (all zero) is skipped.  Each inode in use is judged (its
 * mode, a symbolic link's target, a special file's lack of data, a
 * directory's size, a size past what its map can reach), then its block
 * map is walked: every pointer is range-checked before it is followed,
 * and the blocks it claims go into the found blocks (a block claimed
 * twice into c->dup, for pass 1b).  Each inode's file type is kept, and
 * each directory is added to the directories found.
 *
 * Pointers past the end of a file are noted during the walk and judged
 * at the end of the pass, once every inode has claimed its blocks
 * (past_judge()).
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The walk of one inode's block map (walk_ptr()), and what it counts. */
struct walkst {
	uint32_t ino;
	uint64_t parent;        /* where the pointer walked lives: an indirect */
	uint32_t slot;          /* block (0: the inode) and its slot there */
	uint64_t limit;         /* logical blocks the size covers */
	uint64_t count;         /* blocks mapped, indirect ones included */
	uint64_t visits;
	int too_many;
	int changed;            /* a pointer in the inode itself changed */
	int ind_cleared;        /* a pointer in an indirect block was cleared */
	uint64_t size;
};

/* The logical blocks one pointer at level maps (a data block's: 1). */
uint64_t span_of(struct chk *c, int level)
{
	uint64_t s = 1;
	while (level-- > 0)
		s *= c->fs->ptrs;
	return s;
}

/* Count again what a walk counts, in the tree as it is now. */
static int recount_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		      int bad, void *arg)
{
	struct walkst *w = arg;

	(void)fs; (void)ino; (void)pblk; (void)level;
	if (bad || lblk >= w->limit)
		return 0;
	w->count++;
	return 0;
}

/* ---- pointers past the end ----------------------------------------------- */

/*
 * Pointers past the end of a file.  A truncate sets the size at once and
 * frees the blocks past it only once the cleared pointers are on disk
 * (rule 2), so after a crash a pointer past the size may remain: a leak,
 * when all it maps is still marked in use and nothing else claims it.  A
 * block past the end that is marked free, or that another file (or the
 * file system's metadata) claims, is no leak: a pointer survived its
 * block's reuse.  Which it is can be told only once every inode has
 * claimed its blocks, so pass 1 notes each such pointer (past_note()) and
 * judges them all at its end (past_judge()).
 */
static int past_note(struct chk *c, const struct walkst *w, uint64_t p, int level,
		     uint64_t lblk)
{
	if (c->npast == c->cappast) {
		size_t cap = c->cappast ? 2 * c->cappast : 16;
		struct past *v = realloc(c->past, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->past = v;
		c->cappast = cap;
	}
	c->past[c->npast++] = (struct past){ w->ino, w->slot, w->parent, p, lblk, w->size,
					     level };
	return 0;
}

/* What a past pointer's tree holds that is no leak: the first block marked
 * free, and the first claimed elsewhere (0: none). */
struct pastscan {
	uint64_t free_blk, claimed_blk, visits;
};

static int past_scan(struct chk *c, struct pastscan *s, uint64_t p, int level)
{
	struct buf *b;
	uint32_t i;
	int set, rc;

	if (!block_in_range(c->fs, p) || ++s->visits > c->nblocks)
		return 0;  /* a bad pointer under it: nothing it could reuse */
	if ((found_test(c, p) || bit_test(c->pastmap, p)) && !s->claimed_blk)
		s->claimed_blk = p;
	bit_set(c->pastmap, p);
	rc = bitmap_test(c->fs, SUFS_BITMAP_BLOCK, p, &set);
	if (rc)
		return rc;
	if (!set && !s->free_blk)
		s->free_blk = p;
	if (level == 0 || s->claimed_blk == p)
		return 0;  /* another's indirect block: its pointers are its own */
	rc = buf_get(c->fs, p, BUF_IND, &b);
	if (rc)
		return rc;
	for (i = 0; i < c->fs->ptrs && !rc; i++) {
		uint64_t child = get64(b->data + IND_PTR(i));
		if (child)
			rc = past_scan(c, s, child, level - 1);
	}
	buf_put(c->fs, b);
	return rc;
}

/* Clear a noted pointer where it lives. */
static int past_clear(struct chk *c, const struct past *e)
{
	struct sufs_inode in;
	struct buf *b;
	int rc;

	if (e->parent == 0) {
		rc = inode_load(c->fs, e->ino, &in);
		if (rc)
			return rc;
		in.block[e->slot] = 0;
		return inode_store(c->fs, e->ino, &in, UPD_INODEDEP, NULL, NULL);
	}
	rc = buf_get(c->fs, e->parent, BUF_IND, &b);
	if (rc)
		return rc;
	buf_update(c->fs, b, IND_PTR(e->slot), 8, UPD_ALLOCINDIR, NULL);
	put64(b->data + IND_PTR(e->slot), 0);
	buf_put(c->fs, b);
	return 0;
}

/* A pointer cleared in an indirect block that the walk met twice (a loop)
 * was counted there: count the inode's blocks again. */
static int past_recount(struct chk *c, uint32_t ino)
{
	struct sufs_inode in;
	struct walkst w = { .ino = ino };
	struct pctx x = { .ino = ino };
	int rc = inode_load(c->fs, ino, &in);

	if (rc)
		return rc;
	w.limit = in.size / c->fs->bsize + (in.size % c->fs->bsize != 0);
	rc = inode_walk(c->fs, ino, &in, recount_fn, &w);
	if (rc < 0 || in.blocks == w.count)
		return rc < 0 ? rc : 0;
	x.num = in.blocks;
	x.num2 = w.count;
	if (!fix_problem(c, SUFS_PR_BLOCKS_COUNT, &x))
		return 0;
	in.blocks = w.count;
	return inode_store(c->fs, ino, &in, UPD_INODEDEP, NULL, NULL);
}

int past_judge(struct chk *c)
{
	char why[96];
	size_t i;
	int rc = 0;

	if (!c->npast)
		return 0;
	c->pastmap = calloc((c->nblocks + 7) / 8, 1);
	if (!c->pastmap)
		return -ENOMEM;
	for (i = 0; i < c->npast && !rc && c->stop == GOING; i++) {
		const struct past *e = &c->past[i];
		struct pctx x = { .ino = e->ino, .blk = e->ptr, .num = e->lblk, .num2 = e->size,
				  .str = why };
		struct pastscan s = { 0 };
		unsigned code = SUFS_PR_BLOCK_PAST_SIZE;
		uint64_t bad = 0;

		rc = past_scan(c, &s, e->ptr, e->level);
		if (rc)
			break;
		if (s.claimed_blk) {
			code = SUFS_PR_PAST_SIZE_CLAIMED;
			bad = s.claimed_blk;
		} else if (s.free_blk) {
			code = SUFS_PR_PAST_SIZE_FREE;
			bad = s.free_blk;
		}
		if (bad == e->ptr)
			snprintf(why, sizeof(why), "that block");
		else
			snprintf(why, sizeof(why), "block %llu under it", (unsigned long long)bad);
		if (fix_problem(c, code, &x)) {
			rc = past_clear(c, e);
			if (!rc && e->parent)
				rc = past_recount(c, e->ino);
		}
	}
	return rc;
}

/* ---- the walk of a block map --------------------------------------------- */

/*
 * Check the tree under pointer p (level 0: a data block) mapping logical
 * blocks from lblk on.  Returns 1 when the pointer is to be cleared, 0 to
 * keep it, or an error.
 *
 * in_shared: p lives in an indirect block that an inode earlier in the
 * walk claimed first.  Pass 1b keeps that block for the first claimant
 * and gives this inode a copy; a pointer of it that is bad for this inode
 * is cleared then, in the copy (dup_walk), never here in the block the
 * other inode keeps.  Until then it is not claimed, nor counted.
 */
static int walk_ptr(struct chk *c, struct walkst *w, uint64_t p, int level, uint64_t lblk,
		    int in_shared)
{
	struct sufs_fs *fs = c->fs;
	struct pctx x = { .ino = w->ino, .blk = p, .num = lblk, .num2 = w->size };
	uint64_t span, child;
	struct buf *b;
	uint32_t i;
	int rc, shared;

	if (w->too_many || c->stop != GOING)
		return 0;
	if (++w->visits > c->nblocks) {
		w->too_many = 1;
		return 0;
	}
	if (!block_in_range(fs, p))
		return in_shared ? 0 : fix_problem(c, SUFS_PR_BAD_BLOCK, &x);
	if (lblk >= w->limit)
		return in_shared ? 0 : past_note(c, w, p, level, lblk);
	shared = found_test(c, p);
	rc = claim_block(c, p);
	if (rc)
		return rc;
	w->count++;
	if (level == 0)
		return 0;
	span = span_of(c, level - 1);
	rc = buf_get(fs, p, BUF_IND, &b);
	if (rc)
		return rc;
	for (i = 0; i < fs->ptrs && !rc; i++) {
		child = get64(b->data + IND_PTR(i));
		if (!child)
			continue;
		w->parent = p;
		w->slot = i;
		rc = walk_ptr(c, w, child, level - 1, lblk + i * span, shared);
		if (rc == 1) {
			buf_update(fs, b, IND_PTR(i), 8, UPD_ALLOCINDIR, NULL);
			put64(b->data + IND_PTR(i), 0);
			w->ind_cleared = 1;
			rc = 0;
		}
	}
	buf_put(fs, b);
	return rc;
}

static int walk_inode(struct chk *c, struct walkst *w, struct sufs_inode *in)
{
	uint64_t p = c->fs->ptrs, first[3] = { SUFS_NDIR, SUFS_NDIR + p, SUFS_NDIR + p + p * p };
	uint32_t i;
	int rc = 0;

	for (i = 0; i < SUFS_NBLOCKS && rc >= 0; i++) {
		if (!in->block[i])
			continue;
		w->parent = 0;
		w->slot = i;
		if (i < SUFS_NDIR)
			rc = walk_ptr(c, w, in->block[i], 0, i, 0);
		else
			rc = walk_ptr(c, w, in->block[i], (int)(i - SUFS_IND + 1),
				      first[i - SUFS_IND], 0);
		if (rc == 1) {
			in->block[i] = 0;
			w->changed = 1;
			rc = 0;
		}
	}
	/* an indirect block the walk met twice (a loop, a block at two
	 * levels) may have lost pointers it was counted with the first time:
	 * what it maps now is what the repaired inode counts */
	if (rc >= 0 && w->ind_cleared && !w->too_many) {
		w->count = 0;
		rc = inode_walk(c->fs, w->ino, in, recount_fn, w);
	}
	return rc;
}

/* ---- an inode ------------------------------------------------------------ */

/* Zero an inode that claimed nothing, and free its number (not that of
 * the reserved inode, which stays in use). */
static int drop_inode(struct chk *c, uint32_t ino)
{
	struct sufs_inode zero;
	int err;

	memset(&zero, 0, sizeof(zero));
	err = inode_store(c->fs, ino, &zero, UPD_FREEFILE, NULL, NULL);
	if (!err && ino >= SUFS_ROOT_INO)
		err = free_inode(c->fs, ino, 0);
	return err;
}

static int valid_type(uint16_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		return 1;
	}
	return 0;
}

/* What is wrong with a symbolic link, or NULL. */
static const char *symlink_problem(struct chk *c, const struct sufs_inode *in)
{
	uint8_t raw[SUFS_FAST_SYMLINK_MAX];
	uint32_t i;

	if (in->size == 0)
		return "empty target";
	if (in->size > c->fs->bsize || in->size >= SUFS_PATH_MAX)
		return "target too long";
	if (in->size > SUFS_FAST_SYMLINK_MAX) {
		if (!in->block[0])
			return "no block";
		for (i = 1; i < SUFS_NBLOCKS; i++)
			if (in->block[i])
				return "more than one block";
		return NULL;
	}
	fast_target_get(in, raw);
	for (i = 0; i < in->size; i++)
		if (!raw[i])
			return "NUL in the target";
	for (; i < SUFS_FAST_SYMLINK_MAX; i++)
		if (raw[i])
			return "bytes after the target";
	if (in->blocks)
		return "fast symlink with blocks";
	return NULL;
}

/*
 * What is wrong with the target a slow symbolic link's block holds (its
 * size checked already): 1 with *why, 0, or an error.  The block holds the
 * target and zeros after it (man/sufs.5): a NUL inside the target, or
 * bytes after it, are what a block whose pointer reached the disk before
 * its contents shows (rule 1), or damage.
 */
static int slow_target_problem(struct chk *c, const struct sufs_inode *in, const char **why)
{
	struct buf *b;
	int rc = buf_get(c->fs, in->block[0], BUF_DATA, &b);

	if (rc)
		return rc;
	if (memchr(b->data, 0, in->size))
		*why = "NUL in the target";
	else if (in->size < c->fs->bsize &&
		 memcmp(b->data + in->size, c->fs->zero, c->fs->bsize - in->size))
		*why = "bytes after the target";
	else
		*why = NULL;
	buf_put(c->fs, b);
	return *why != NULL;
}

/* One past the last data block a walk of the tree finds, bad pointers left
 * out; it stops after as many visits as the device has blocks (the walk
 * of pass 1 then finds too many). */
struct endst {
	uint64_t end, visits, max;
};

static int end_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		  int bad, void *arg)
{
	struct endst *e = arg;

	(void)fs; (void)ino; (void)pblk;
	if (++e->visits > e->max)
		return 1;
	if (!bad && level == 0 && lblk >= e->end)
		e->end = lblk + 1;
	return 0;
}

/*
 * A size past what the block map can reach: a regular file's past the
 * largest file, a directory's past its last block (pass 2 fills the holes
 * before a directory's end, and would fill a size's worth of them).  Both
 * become the end of the last block, as e2fsck does.  The size is fixed
 * before pass 1's walk, so that the walk clears in this run what lies past
 * the new size (an indirect block whose pointers were all bad).  Returns
 * 1 when the size changed, 0, or an error.
 */
static int size_past_end(struct chk *c, uint32_t ino, struct sufs_inode *in)
{
	struct sufs_fs *fs = c->fs;
	struct pctx x = { .ino = ino, .num = in->size };
	struct endst e = { .max = c->nblocks };
	uint64_t max = inode_max_blocks(fs) << fs->bshift;
	int rc;

	if (S_ISREG(in->mode) ? in->size <= max : !S_ISDIR(in->mode) || in->size <= fs->bsize)
		return 0;
	rc = inode_walk(fs, ino, in, end_fn, &e);
	if (rc < 0)
		return rc;
	if (S_ISREG(in->mode)) {
		x.num2 = max;
		if (!fix_problem(c, SUFS_PR_FILE_SIZE_PAST_MAX, &x))
			return 0;
		in->size = e.end * fs->bsize;
		return 1;
	}
	x.num2 = e.end ? e.end - 1 : 0;
	if (in->size <= (x.num2 + 1) * fs->bsize || !fix_problem(c, SUFS_PR_DIR_SIZE_PAST_END, &x))
		return 0;
	in->size = (x.num2 + 1) * fs->bsize;
	return 1;
}

static int check_inode(struct chk *c, uint32_t ino, const uint8_t *raw)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode in;
	struct pctx x = { .ino = ino };
	struct walkst w = { .ino = ino };
	const char *why;
	int changed = 0, rc;
	size_t i;

	if (sufs_inode_is_zero(raw))
		return 0;
	sufs_inode_decode(raw, &in);
	x.num = in.mode;
	if (ino < SUFS_ROOT_INO)
		return fix_problem(c, SUFS_PR_RESERVED_INODE, &x) ? drop_inode(c, ino) : 0;
	if (in.mode == 0)
		return fix_problem(c, SUFS_PR_INODE_ZERO_MODE, &x) ? drop_inode(c, ino) : 0;
	if (!valid_type(in.mode))
		return fix_problem(c, SUFS_PR_INODE_BAD_MODE, &x) ? drop_inode(c, ino) : 0;
	if (ino == SUFS_ROOT_INO && !S_ISDIR(in.mode))
		return fix_problem(c, SUFS_PR_ROOT_NOT_DIR, &x) ? drop_inode(c, ino) : 0;
	if (in.checksum != sufs_inode_csum(raw, ino) && fix_problem(c, SUFS_PR_INODE_CSUM, &x))
		changed = 1;
	switch (in.mode & S_IFMT) {
	case S_IFLNK:
		why = symlink_problem(c, &in);
		if (why) {
			x.str = why;
			return fix_problem(c, SUFS_PR_BAD_SYMLINK, &x) ? drop_inode(c, ino) : 0;
		}
		break;
	case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		for (i = 0; i < SUFS_NBLOCKS && !in.block[i]; i++)
			;
		if ((in.size || in.blocks || i < SUFS_NBLOCKS) &&
		    fix_problem(c, SUFS_PR_SPECIAL_DATA, &x)) {
			in.size = 0;
			in.blocks = 0;
			memset(in.block, 0, sizeof(in.block));
			changed = 1;
		}
		break;
	case S_IFDIR:
		if (in.size == 0)
			return fix_problem(c, SUFS_PR_DIR_NO_BLOCKS, &x) ? drop_inode(c, ino) : 0;
		x.num = in.size;
		if (in.size / fs->bsize >= c->nblocks)
			return fix_problem(c, SUFS_PR_TOO_MANY_BLOCKS, &x) ? drop_inode(c, ino) : 0;
		if (in.size % fs->bsize && fix_problem(c, SUFS_PR_DIR_SIZE, &x)) {
			in.size += fs->bsize - in.size % fs->bsize;
			changed = 1;
		}
		break;
	}
	if (inode_has_blocks(&in)) {
		rc = size_past_end(c, ino, &in);
		if (rc < 0)
			return rc;
		changed |= rc;
		w.size = in.size;
		w.limit = in.size / fs->bsize + (in.size % fs->bsize != 0);
		c->nclaimed = 0;
		rc = walk_inode(c, &w, &in);
		if (rc < 0)
			return rc;
		if (w.too_many) {
			/* give back what it claimed first, then clear it */
			for (i = 0; i < c->nclaimed; i++)
				found_clear(c, c->claimed[i]);
			return fix_problem(c, SUFS_PR_TOO_MANY_BLOCKS, &x) ? drop_inode(c, ino) : 0;
		}
		changed |= w.changed;
		if (S_ISLNK(in.mode) && !in.block[0]) {
			/* its one block was a bad pointer, now cleared */
			x.str = "no block";
			if (fix_problem(c, SUFS_PR_BAD_SYMLINK, &x))
				return drop_inode(c, ino);
		} else if (S_ISLNK(in.mode)) {
			rc = slow_target_problem(c, &in, &x.str);
			if (rc < 0)
				return rc;
			if (rc && fix_problem(c, SUFS_PR_BAD_SYMLINK, &x)) {
				for (i = 0; i < c->nclaimed; i++)
					found_clear(c, c->claimed[i]);
				return drop_inode(c, ino);
			}
		}
		x.num = in.blocks;
		x.num2 = w.count;
		if (in.blocks != w.count && fix_problem(c, SUFS_PR_BLOCKS_COUNT, &x)) {
			in.blocks = w.count;
			changed = 1;
		}
	}
	rc = check_xattrs(c, ino, &in, &changed);
	if (rc)
		return rc;
	ino_set_ftype(c, ino, sufs_ftype_of_mode(in.mode), !S_ISDIR(in.mode) && in.links == 1);
	if (S_ISDIR(in.mode) && (rc = dir_add_info(c, ino)) != 0)
		return rc;
	if (S_ISREG(in.mode) && (in.flags & SUFS_IFLAG_SNAPSHOT) && (rc = flagged_note(c, ino)) != 0)
		return rc;
	if (changed)
		return inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
	return 0;
}

/* Start reading group g's inode table, in one request.  With a cold
 * cache, pass 1's reads of one block at a time would otherwise each wait
 * for the disk (or for a read-ahead that runs past the table's end). */
static void prefetch_table(struct sufs_fs *fs, uint32_t g)
{
	struct sufs_group_layout l;

	if (g >= fs->sb.groups_count)
		return;
	sufs_group_layout(&fs->sb, g, &l);
	sufs_dev_prefetch(fs->dev, l.inode_table << fs->bshift,
			  (uint64_t)l.inode_table_blocks << fs->bshift);
}

/*
 * Pass 1 reads the inode tables a run of blocks at a time, past the
 * cache: one request for RUN_BLOCKS blocks, where the cache would make
 * one each.  The cache stays the authority: a block it holds is taken
 * from it, and the run's copy of the others is trusted only while the
 * device has had no write since the run was read (a block the cache
 * lacks then holds on the device what the run read).
 */
#define RUN_BLOCKS 8u

struct run {
	uint8_t *data;             /* NULL: no memory for it, block by block (mapped, not
	                              malloc'ed: given back whole, it leaves nothing in the
	                              heap for the later passes' peak) */
	uint64_t first;            /* its first block */
	uint32_t n;                /* blocks it holds (0: none) */
	uint64_t writes;           /* the device's writes when it was read */
};

static int run_has(const struct sufs_fs *fs, const struct run *r, uint64_t blk)
{
	return r->n && blk >= r->first && blk - r->first < r->n && fs->dev->writes == r->writes;
}

/* Inode-table block blk (of a table that ends before `end`) into
 * c->scratch. */
static int table_block(struct chk *c, struct run *r, uint64_t blk, uint64_t end)
{
	struct sufs_fs *fs = c->fs;
	uint64_t n = end - blk < RUN_BLOCKS ? end - blk : RUN_BLOCKS;
	struct buf *b;
	int rc;

	if (r->data && !cache_lookup(fs, blk)) {
		if (!run_has(fs, r, blk)) {
			r->n = 0;
			if (sufs_dev_read(fs->dev, blk << fs->bshift, r->data,
					  (size_t)n << fs->bshift) == 0) {
				r->first = blk;
				r->n = (uint32_t)n;
				r->writes = fs->dev->writes;
				fs->stats.block_reads += n;
			}
		}
		if (run_has(fs, r, blk)) {
			memcpy(c->scratch, r->data + ((blk - r->first) << fs->bshift), fs->bsize);
			return 0;
		}
	}
	rc = buf_get(fs, blk, BUF_ITABLE, &b); /* and a read error is its to report */
	if (rc)
		return rc;
	memcpy(c->scratch, b->data, fs->bsize);
	buf_put(fs, b);
	return 0;
}

int pass1(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_group_layout l;
	size_t runsize = (size_t)RUN_BLOCKS << fs->bshift;
	struct run run = { mmap(NULL, runsize, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0, 0, 0 };
	uint32_t g, k, i, ino;
	uint64_t blk;
	int rc = 0;

	if (run.data == MAP_FAILED)
		run.data = NULL;

	/* every group's metadata is in use */
	for (g = 0; g < fs->sb.groups_count; g++) {
		sufs_group_layout(&fs->sb, g, &l);
		for (blk = l.start; blk < l.first_data; blk++)
			found_set(c, blk);
	}
	prefetch_table(fs, 0);
	for (g = 0; g < fs->sb.groups_count && !rc; g++) {
		/* the next group's table is read while this one is checked */
		prefetch_table(fs, g + 1);
		sufs_group_layout(&fs->sb, g, &l);
		for (k = 0; k < l.inode_table_blocks && !rc; k++) {
			rc = table_block(c, &run, l.inode_table + k,
					 l.inode_table + l.inode_table_blocks);
			if (rc)
				break;
			if (memcmp(c->scratch, fs->zero, fs->bsize) == 0) {
				pass_progress(c, 1, (uint64_t)g * fs->sb.inodes_per_group +
					 (k + 1) * fs->inodes_per_block, c->ninodes);
				continue; /* a block of never-used inodes */
			}
			for (i = 0; i < fs->inodes_per_block && !rc; i++) {
				ino = g * fs->sb.inodes_per_group + k * fs->inodes_per_block + i + 1;
				if (poll_stop(c))
					goto out;
				rc = check_inode(c, ino, c->scratch + i * SUFS_INODE_SIZE);
				pass_progress(c, 1, ino, c->ninodes);
			}
		}
	}
out:
	if (run.data)
		munmap(run.data, runsize);
	return rc;
}
