/*
 * xattr.c - pass 1's look at an inode's extended attributes (man/sufs.5,
 * "Extended attributes"), on an image with SUFS_FEATURE_RO_XATTR.
 *
 * The attributes are in the inode's own bytes, or in one attribute block
 * that the inode names; never both, and no block is shared.  The block is
 * claimed like any block of the inode's (a block claimed twice goes to
 * pass 1b), then read: its magic, its entries (in bounds, in order, of
 * known namespaces), its reference count (1), its checksum.  A block that
 * nothing names is no business of this pass: pass 5 finds it marked in
 * use and used by nothing, a leak (blocks_leaked) when a crash left it.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>

/* What is wrong with attribute block data (block blk), or NULL; a bad
 * checksum alone sets *csum_only. */
static const char *block_problem(struct chk *c, const uint8_t *data, int dirty,
				 uint64_t blk, int *csum_only)
{
	uint32_t bsize = c->fs->bsize;
	const char *why;

	*csum_only = 0;
	if (get32(data + XB_MAGIC) != SUFS_XATTR_MAGIC)
		return "not an attribute block";
	if (!mem_is_zero(data + XB_REFCOUNT + 4, XB_ENTRIES - XB_REFCOUNT - 4))
		return "reserved bytes are not zero";
	if (sufs_xattr_check(data + XB_ENTRIES, XB_CSUM(bsize) - XB_ENTRIES, &why, NULL))
		return why;
	if (data[XB_ENTRIES + XE_NS] == 0)
		return "no attributes";
	*csum_only = !dirty && get32(data + XB_CSUM(bsize)) != sufs_xattr_csum(data, bsize, blk);
	return NULL;
}

/*
 * The attribute block of a sound inode: read, then claimed.  One that is
 * no sound attribute block is cleared from the inode, unclaimed (if
 * another claims it, that one keeps it); a sound one claimed before
 * (by another inode, or by this one's block map) goes to pass 1b, and
 * only one claimed first here is repaired in place.  Sets *changed when
 * the inode's pointer was cleared.
 */
static int check_block(struct chk *c, uint32_t ino, struct sufs_inode *in, int *changed)
{
	struct sufs_fs *fs = c->fs;
	uint64_t blk = in->xattr_block;
	struct pctx x = { .ino = ino, .blk = blk };
	struct buf *b;
	int rc, csum_only;

	if (!block_in_range(fs, blk)) {
		if (fix_problem(c, SUFS_PR_XATTR_BAD_BLOCK, &x)) {
			in->xattr_block = 0;
			*changed = 1;
		}
		return 0;
	}
	rc = buf_get(fs, blk, BUF_XATTR, &b);
	if (rc)
		return rc;
	x.str = block_problem(c, b->data, b->dirty, blk, &csum_only);
	x.num = get32(b->data + XB_REFCOUNT);
	x.num2 = 1;
	if (x.str) {
		buf_put(fs, b);
		if (!fix_problem(c, SUFS_PR_XATTR_BLOCK_CORRUPT, &x))
			return claim_block(c, blk);
		in->xattr_block = 0; /* unclaimed: pass 5 frees it, if nothing has it */
		*changed = 1;
		return 0;
	}
	if (found_test(c, blk)) {
		buf_put(fs, b);
		return claim_block(c, blk); /* claimed before: pass 1b decides */
	}
	if (x.num != 1 && fix_problem(c, SUFS_PR_XATTR_REFCOUNT, &x)) {
		buf_update(fs, b, XB_REFCOUNT, 4, UPD_EXTATTR, NULL);
		put32(b->data + XB_REFCOUNT, 1);
	}
	if (csum_only && fix_problem(c, SUFS_PR_XATTR_CSUM, &x))
		buf_touch(fs, b); /* written again, sealed with its checksum */
	buf_put(fs, b);
	return claim_block(c, blk);
}

/*
 * Pass 1: the attributes of inode ino (in, decoded; changed in place,
 * *changed set, when a repair changes it).  0 or an error.
 */
int check_xattrs(struct chk *c, uint32_t ino, struct sufs_inode *in, int *changed)
{
	struct pctx x = { .ino = ino };

	if (!(c->fs->sb.features_ro_compat & SUFS_FEATURE_RO_XATTR))
		return 0; /* reserved bytes: nothing reads them */
	if (in->xattr_block && !mem_is_zero(in->xattr, SUFS_XATTR_INLINE))
		x.str = "bytes beside an attribute block";
	else if (!in->xattr_block)
		sufs_xattr_check(in->xattr, SUFS_XATTR_INLINE, &x.str, NULL);
	if (x.str && fix_problem(c, SUFS_PR_XATTR_INLINE, &x)) {
		memset(in->xattr, 0, SUFS_XATTR_INLINE);
		*changed = 1;
	}
	return in->xattr_block ? check_block(c, ino, in, changed) : 0;
}
