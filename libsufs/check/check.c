/*
 * check.c - the checker: find every inconsistency, and repair it.
 *
 * This file is the driver: it chooses the superblock and how to run (a
 * leak-only check makes a trial run first, which changes nothing), runs
 * the passes in order on the file system opened on that superblock, and
 * records the outcome in it.  Every problem goes through fix_problem()
 * (decide.c), the one place that decides whether it is fixed, by the
 * problem's row in the table (problems.c) and the run's mode; what the
 * passes find for later ones is kept in found.c.  A repair leaves a file
 * system that a second full check finds clean.
 *
 * The passes are those of e2fsck and fsck_ffs, a file each:
 *   0   pass0.c   superblock (a damaged primary falls back to a backup)
 *                 and group descriptors;
 *   1   pass1.c   every inode: its mode, size and block map; the blocks
 *                 each claims go into a bitmap (found blocks);
 *   1b  pass1b.c  blocks claimed twice are cloned, or, when that is
 *                 refused or there is no room, the file is cleared;
 *   2   pass2.c   every directory block: its structure, checksum, '.',
 *                 '..' and every entry (names.c finds a name given
 *                 twice); names are counted per inode;
 *   3   pass3.c   connectivity: every directory reaches the root; the
 *                 others go to /lost+found; '..' is made right;
 *   4   pass4.c   reference counts: link counts against the names
 *                 counted; inodes no name reaches are cleared or
 *                 connected to /lost+found; then the snapshot slots, and
 *                 the snapshot files no slot names;
 *   5   pass5.c   the bitmaps against what passes 1-4 found, then the
 *                 summaries.
 *
 * What the checker keeps is small and flat (struct chk, check_int.h): a
 * bit per block (found, and claimed twice), a byte per inode (its file
 * type, 0 when free, and its names counted: ino_ftype()), and a sorted
 * array of the directories.  Metadata is read through the library's cache, kept
 * small (CHECK_CACHE_BYTES): the passes read each block about once, in
 * order, and a cache as large as the metadata would only cost memory and
 * page faults.  Nothing read from the image is trusted before it is
 * range-checked: a hostile image gives problems, never a read out of
 * bounds.
 *
 * Repairs open the file system in async mode (a checker's writes need no
 * ordering) and use the library's own functions where there are some
 * (mkdir for /lost+found, dir_add to connect, bitmap_set, inode_store,
 * free_block).  What the repairs of several passes share is in repair.c:
 * the checker's own allocations (clones, filled holes) come from the
 * found-blocks bitmap, and before the library first allocates, from the
 * on-disk bitmaps, those are made to agree with what was found
 * (prepare_alloc()).
 *
 * The background check (bgcheck.c) runs the same check on a snapshot's
 * view (check_dev()): fix_problem() decides there as anywhere, and hands
 * each fix it decides to the background check instead of making it.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdlib.h>

/* ---- one run ------------------------------------------------------------- */

static const char *const pass_names[] = {
	"superblock and group descriptors",
	"inodes and block maps",
	"directories",
	"connectivity",
	"reference counts",
	"bitmaps and summaries",
};

static void chk_free(struct chk *c)
{
	sparse_free(&c->found);
	free(c->dup);
	free(c->seen);
	free(c->firsts);
	sparse_free(&c->ino);
	free(c->many.ino);
	free(c->many.names);
	memset(&c->many, 0, sizeof(c->many));
	free(c->dirs);
	free(c->claimed);
	free(c->scratch);
	free(c->held);
	free(c->snapclaims);
	free(c->past);
	free(c->pastmap);
	free(c->flagged);
	c->flagged = NULL;
	c->nflagged = c->capflagged = 0;
	c->past = NULL;
	c->pastmap = NULL;
	c->npast = c->cappast = 0;
	names_free(&c->names);
	c->snapclaims = NULL;
	c->nsnapclaims = c->capsnapclaims = 0;
}

static int chk_alloc(struct chk *c)
{
	c->nblocks = c->fs->sb.blocks_count;
	c->ninodes = c->fs->sb.inodes_count;
	c->nomem = 0;
	if (sparse_init(&c->found, (c->nblocks + 7) / 8, FOUND_CHUNK_SHIFT) ||
	    sparse_init(&c->ino, (uint64_t)c->ninodes + 1, INO_CHUNK_SHIFT))
		return -ENOMEM;
	c->scratch = malloc(c->fs->bsize);
	c->snapdir = 0;
	c->snap_named = 0;
	return c->scratch ? 0 : -ENOMEM;
}

static int run_passes(struct chk *c, int backup)
{
	int rc;

	begin_pass(c, 0, pass_names[0]);
	check_super_fields(c, backup);
	check_groups(c);
	begin_pass(c, 1, pass_names[1]);
	rc = pass1(c);
	if (!rc)
		rc = past_judge(c);
	if (!rc && c->ndups) {
		begin_pass(c, 1, "blocks claimed twice (1b)");
		rc = pass1b(c);
	}
	/* what a pass found must all be kept before the next acts on it */
	if (!rc && c->nomem)
		rc = -ENOMEM;
	if (!rc) {
		begin_pass(c, 2, pass_names[2]);
		rc = pass2(c);
	}
	if (!rc && c->nomem)
		rc = -ENOMEM;
	if (!rc) {
		begin_pass(c, 3, pass_names[3]);
		rc = pass3(c);
	}
	if (!rc && c->nomem)
		rc = -ENOMEM;
	if (!rc) {
		begin_pass(c, 4, pass_names[4]);
		rc = pass4(c);
		if (!rc)
			rc = check_snap_slots(c);
		if (!rc)
			rc = snap_orphans(c);
	}
	if (!rc && c->nomem)
		rc = -ENOMEM;
	if (!rc) {
		begin_pass(c, 5, pass_names[5]);
		rc = pass5(c);
	}
	return rc;
}

/* A device that passes everything to another and does not close it:
 * sufs_close() then leaves the caller's device open. */
static int borrow_read(struct sufs_dev *d, uint64_t off, void *buf, size_t len)
{
	return sufs_dev_read(d->priv, off, buf, len);
}
static int borrow_write(struct sufs_dev *d, uint64_t off, const void *buf, size_t len)
{
	return sufs_dev_write(d->priv, off, buf, len);
}
static int borrow_barrier(struct sufs_dev *d)
{
	return sufs_dev_barrier(d->priv);
}
static void borrow_close(struct sufs_dev *d)
{
	(void)d; /* sufs_dev_close() frees the wrapper; the device stays open */
}
static void borrow_prefetch(struct sufs_dev *d, uint64_t off, uint64_t len)
{
	sufs_dev_prefetch(d->priv, off, len);
}
static const struct sufs_dev_ops borrow_ops = {
	borrow_read, borrow_write, borrow_barrier, NULL, borrow_close, borrow_prefetch,
};

static struct sufs_dev *borrow(struct sufs_dev *dev)
{
	struct sufs_dev *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->ops = &borrow_ops;
	d->size = dev->size;
	d->writable = dev->writable;
	d->is_blockdev = dev->is_blockdev;
	d->name = dev->name ? strdup(dev->name) : NULL;
	d->priv = dev;
	return d;
}

/* A block the library allocated during a repair (a snapshot's copy of a
 * block the repair changed, the pointers to it): in use. */
static void note_alloc(struct sufs_fs *fs, uint64_t blk, void *arg)
{
	struct chk *c = arg;

	if (block_in_range(fs, blk))
		found_set(c, blk);
}

/*
 * One run over the file system: open it, run the passes, record the
 * outcome in the superblock (when writable), close it.
 */
static int run_once(struct chk *c, struct sufs_dev *dev, uint64_t sb_off, int chosen,
		    const char *why)
{
	struct sufs_check_result *r = c->r;
	struct sufs_dev *bd = borrow(dev);
	unsigned oflags = SUFS_OPEN_IGNORE_CSUM | SUFS_OPEN_NOFLAGS;
	struct pctx x = { .num = sb_off, .str = why };
	uint32_t mode = 0;
	int rw = c->writable && !c->dry, backup = chosen == 1 || chosen == 3, rc, rc2;

	if (!bd)
		return -ENOMEM;
	if (rw)
		oflags |= SUFS_OPEN_RDWR;
	rc = sufs_open_dev(bd, oflags, sb_off, &c->fs);
	if (rc) {
		sufs_dev_close(bd);
		r->error_where = "opening the file system";
		return rc;
	}
	sufs_set_cache_size(c->fs, CHECK_CACHE_BYTES);
	mode = c->fs->sb.write_mode;
	if (rw)
		rc = sufs_set_mode(c->fs, SUFS_MODE_ASYNC);
	if (!rc)
		rc = chk_alloc(c);
	if (!rc) {
		c->fs->alloc_note = note_alloc;
		c->fs->alloc_note_arg = c;
		r->inodes_count = c->ninodes;
		r->blocks_count = c->nblocks;
		if (backup && fix_problem(c, chosen == 3 ? SUFS_PR_SB_CHOSEN : SUFS_PR_SB_PRIMARY_BAD,
					  &x))
			c->fs->sb_dirty = 1; /* touch() wrote the primary already */
		if (chosen == 2 && fix_problem(c, SUFS_PR_SB_CSUM, &x))
			c->fs->sb_dirty = 1; /* and sealed it anew */
		rc = run_passes(c, backup);
		if (rc)
			r->error_where = "checking";
	}
	if (c->stop == CANCELLED)
		r->status |= SUFS_EXIT_CANCELLED;
	if (r->fixed)
		r->status |= SUFS_EXIT_CORRECTED;
	if (rw) {
		struct sufs_super *sb = &c->fs->sb;
		int ok = !rc && c->stop == GOING && !(r->status & SUFS_EXIT_UNCORRECTED);
		if (!rc && (rc2 = sufs_set_mode(c->fs, mode)) != 0)
			rc = rc2;
		fs_now(c->fs, &sb->check_time, &(uint32_t){ 0 });
		sb->check_result = (uint32_t)(r->status | (rc ? SUFS_EXIT_OPERROR : 0));
		sb->write_mode = mode;
		if (ok) {
			sb->state |= SUFS_STATE_CLEAN;
			sb->flags &= ~SUFS_FLAG_NEEDS_FSCK;
		} else if (c->stop != CANCELLED) {
			sb->state &= ~SUFS_STATE_CLEAN;
			sb->flags |= SUFS_FLAG_NEEDS_FSCK;
		}
		c->fs->sb_dirty = 0; /* sufs_close writes the superblock as it stands */
	}
	rc2 = sufs_close(c->fs);
	c->fs = NULL;
	if (!rc && rc2) {
		rc = rc2;
		r->error_where = "writing the repairs";
	}
	return rc;
}

/* A run's state before anything is found: what it was asked, and r,
 * emptied, for its outcome. */
void chk_init(struct chk *c, const struct sufs_check_opts *o, struct sufs_check_result *r)
{
	memset(r, 0, sizeof(*r));
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->r = r;
	c->flags = o->flags;
}

/*
 * Check the file system on dev as c was asked: choose the superblock; a
 * clean file system is not checked unless forced; a leak-only check that
 * may write runs a trial first.
 */
int check_dev(struct chk *c, struct sufs_dev *dev)
{
	struct sufs_check_result *r = c->r;
	struct sufs_super sb;
	uint64_t off;
	const char *why = NULL;
	int rc, backup, leaks_only;

	c->writable = dev->writable && !(c->flags & SUFS_CHECK_NO);
	rc = choose_super(c, dev, &off, &sb, &why);
	if (rc < 0) {
		r->error = rc;
		r->error_where = why;
		r->status = rc == -ENOMEM ? SUFS_EXIT_LIBERROR : SUFS_EXIT_OPERROR;
		return rc;
	}
	backup = rc;
	r->sb_offset = off;
	/* a file system marked clean is not checked, unless a group
	 * descriptor is damaged (then nothing could open it) or the summary
	 * counts cannot be: e2fsck, too, checks these before it trusts the
	 * clean state */
	if (!backup && !(c->flags & SUFS_CHECK_FORCE) && (sb.state & SUFS_STATE_CLEAN) &&
	    !(sb.flags & SUFS_FLAG_NEEDS_FSCK) && sufs_super_check_counts(&sb, NULL) == 0 &&
	    fs_scan_gdt(dev, &sb, NULL, NULL) == 0) {
		r->skipped = 1;
		r->inodes_count = sb.inodes_count;
		r->blocks_count = sb.blocks_count;
		r->inodes_used = sb.inodes_count - sb.free_inodes;
		r->blocks_used = sb.blocks_count - sb.free_blocks;
		return 0;
	}
	leaks_only = (c->flags & SUFS_CHECK_LEAKS_ONLY) && c->writable;
	if (leaks_only) {
		/* a trial first: if anything worse than a leak is there, change
		 * nothing at all */
		c->dry = 1;
		rc = run_once(c, dev, off, backup, why);
		if (rc || c->stop == CANCELLED || r->nonleaks ||
		    (!r->problems && (sb.state & SUFS_STATE_CLEAN) &&
		     !(sb.flags & SUFS_FLAG_NEEDS_FSCK))) {
			tell_held(c);
			chk_free(c);
			if (!rc && r->nonleaks)
				r->halted = 1;
			r->status |= rc ? SUFS_EXIT_OPERROR : 0;
			r->error = rc;
			return rc;
		}
		chk_free(c);
		chk_init(c, c->o, r);
		c->writable = 1;
		r->sb_offset = off;
	}
	rc = run_once(c, dev, off, backup, why);
	chk_free(c);
	if (rc) {
		r->error = rc;
		r->status |= rc == -ENOMEM ? SUFS_EXIT_LIBERROR : SUFS_EXIT_OPERROR;
	}
	return rc;
}

int check_opts(const struct sufs_check_opts *given, struct sufs_check_opts *o)
{
	static const struct sufs_check_opts none;

	return opts_take(o, sizeof(*o), given ? given : &none, CHECK_OPTS_FIRST);
}

int sufs_check_dev(struct sufs_dev *dev, const struct sufs_check_opts *given,
		   struct sufs_check_result *r)
{
	struct sufs_check_opts o;
	struct chk c;
	int rc = check_opts(given, &o);

	if (rc) {
		memset(r, 0, sizeof(*r));
		r->error = rc;
		r->status = SUFS_EXIT_USAGE;
		return rc;
	}
	chk_init(&c, &o, r);
	return check_dev(&c, dev);
}

int sufs_check(const char *path, const struct sufs_check_opts *o, struct sufs_check_result *r)
{
	struct sufs_check_opts known;
	struct sufs_dev *dev;
	int rc, ro = o && (o->flags & SUFS_CHECK_NO);

	memset(r, 0, sizeof(*r));
	rc = check_opts(o, &known);
	if (rc) {
		r->error = rc;
		r->status = SUFS_EXIT_USAGE;
		return rc;
	}
	rc = sufs_dev_open(path, ro ? 0 : SUFS_DEV_RDWR, &dev);
	if (rc) {
		r->error = rc;
		r->error_where = "opening the image";
		r->status = SUFS_EXIT_OPERROR;
		return rc;
	}
	rc = sufs_check_dev(dev, o, r);
	sufs_dev_close(dev);
	return rc;
}

