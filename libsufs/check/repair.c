/*
 * repair.c - what the repairs of several passes share: blocks for the
 * checker's own use, clearing an inode, and the library's allocator made
 * safe to use.
 *
 * The checker takes the blocks it needs itself (a clone, a filled hole, a
 * new root) from the blocks found free, never from the on-disk bitmaps,
 * which may be wrong until pass 5.  The library allocates from the
 * on-disk bitmaps (mkdir for /lost+found, dir_add growing a directory, a
 * snapshot's copies), so before its first allocation those are made to
 * agree with what was found (prepare_alloc()); what it allocates is noted
 * as found (check.c, note_alloc()).
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <sys/stat.h>

/* ---- blocks and inodes --------------------------------------------------- */

static int claim_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		    int bad, void *arg)
{
	struct chk *c = arg;
	(void)fs; (void)ino; (void)lblk; (void)level;
	if (!bad)
		found_set(c, pblk);
	return 0;
}

/* Note the blocks of an inode the library just grew (mkdir, dir_add). */
int claim_inode(struct chk *c, uint32_t ino)
{
	struct sufs_inode in;
	int err = inode_load(c->fs, ino, &in);

	return err ? err : inode_walk(c->fs, ino, &in, claim_fn, c);
}

/*
 * A block for the checker's own use (a clone, a filled hole), from the
 * found blocks: never one that something claims, whatever the on-disk
 * bitmap says.  The on-disk bit follows.
 */
int chk_alloc_block(struct chk *c, uint64_t goal, uint64_t *out)
{
	uint64_t i, b;
	int err;

	if (goal >= c->nblocks)
		goal = 0;
	for (i = 0; i < c->nblocks; i++) {
		b = (goal + i) % c->nblocks;
		if (found_test(c, b) || !block_in_range(c->fs, b))
			continue;
		found_set(c, b);
		err = bitmap_set(c->fs, SUFS_BITMAP_BLOCK, b, 1, NULL);
		if (err < 0)
			return err;
		*out = b;
		return 0;
	}
	return -ENOSPC;
}

/* Give back a block the found bitmap had for one claimant. */
static int chk_free_block(struct chk *c, uint64_t b)
{
	if (!block_in_range(c->fs, b) || !found_test(c, b))
		return 0;
	if (c->dup && bit_test(c->dup, b))
		return 0; /* another inode claims it too */
	if (c->fs->nsnaps && snap_needs(c->fs, b))
		return free_block(c->fs, b); /* a snapshot takes it: still in use */
	found_clear(c, b);
	return free_block(c->fs, b);
}

static int free_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		   int bad, void *arg)
{
	(void)fs; (void)ino; (void)lblk; (void)level;
	return bad ? 0 : chk_free_block(arg, pblk);
}

/* Clear an inode whose blocks were claimed: blocks, inode and number go. */
int clear_inode(struct chk *c, uint32_t ino, const struct sufs_inode *in)
{
	struct sufs_inode zero;
	struct dirinfo *d;
	int was_dir = S_ISDIR(in->mode), err;

	err = inode_walk(c->fs, ino, in, free_fn, c);
	if (!err && in->xattr_block && (c->fs->sb.features_ro_compat & SUFS_FEATURE_RO_XATTR))
		err = chk_free_block(c, in->xattr_block);
	memset(&zero, 0, sizeof(zero));
	if (!err)
		err = inode_store(c->fs, ino, &zero, UPD_FREEFILE, NULL, NULL);
	if (!err)
		err = free_inode(c->fs, ino, was_dir);
	if (was_dir) {
		dirhash_drop(c->fs, ino);
		d = dir_find_info(c, ino);
		if (d)
			d->cleared = 1;
	}
	ino_forget(c, ino); /* the number may be handed out again */
	return err;
}

/* ---- the library's allocator --------------------------------------------- */

/*
 * The library allocates from the on-disk bitmaps: before it first does,
 * make them agree with what was found (pass 5, early), so that it never
 * hands out a block or inode that is in use.
 */
int prepare_alloc(struct chk *c)
{
	int rc;

	if (c->alloc_ready)
		return c->alloc_unsafe ? -EAGAIN : 0;
	c->alloc_ready = 1;
	rc = pass5(c);
	if (!rc && c->alloc_unsafe)
		rc = -EAGAIN;
	return rc;
}
