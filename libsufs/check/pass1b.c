/*
 * pass1b.c - pass 1b: blocks claimed twice.
 *
 * Runs only when pass 1 found a block claimed twice.  The inodes are
 * walked again in order: the first claimant of a block keeps it, and each
 * later one is offered a copy (a clone); one that refuses, or for which
 * there is no room, is offered to be cleared instead.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Copy block p to a new block; the copy keeps the role of the original
 * (type), and is sealed for where it lies. */
static int clone_block(struct chk *c, uint64_t p, enum buf_type type, uint64_t *out)
{
	struct buf *b;
	int err = chk_alloc_block(c, p, out);

	if (err)
		return err;
	err = sufs_block_read(c->fs, p, c->scratch);
	if (!err)
		err = buf_get_new(c->fs, *out, type, &b);
	if (err)
		return err;
	buf_update(c->fs, b, 0, c->fs->bsize, UPD_DATA, NULL);
	memcpy(b->data, c->scratch, c->fs->bsize);
	buf_put(c->fs, b);
	return 0;
}

/* Remember a block the current inode is the first claimant of. */
static int note_first(struct chk *c, uint64_t b)
{
	if (c->nfirsts == c->capfirsts) {
		size_t cap = c->capfirsts ? 2 * c->capfirsts : 64;
		uint64_t *f = realloc(c->firsts, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		c->firsts = f;
		c->capfirsts = cap;
	}
	c->firsts[c->nfirsts++] = b;
	return 0;
}

/*
 * The first claimant of a block (in inode order) keeps it; every later
 * one is offered a copy.  Once a copy is refused, or there is no room
 * for one, the inode keeps sharing (c->ino_shares) and is not offered
 * more copies: pass1b offers to clear it instead, as e2fsck offers to
 * delete a file it may not clone.  Returns the pointer to keep in *p.
 * In a copy of an indirect block, the pointers that are bad for this
 * inode, which pass 1 left alone in the shared block (walk_ptr), are
 * cleared.
 */
static int dup_walk(struct chk *c, uint32_t ino, const struct sufs_inode *in, uint64_t *p,
		    int level, uint64_t lblk, int *changed)
{
	struct sufs_fs *fs = c->fs;
	struct pctx x = { .ino = ino, .blk = *p, .num = lblk, .num2 = in->size };
	uint64_t span, child, nb, limit = in->size / fs->bsize + (in->size % fs->bsize != 0);
	struct buf *b;
	uint32_t i;
	int st, copy = 0;
	int rc, ch;

	if (!block_in_range(fs, *p) || c->stop != GOING)
		return 0;
	if (bit_test(c->dup, *p)) {
		if (!bit_test(c->seen, *p)) {
			bit_set(c->seen, *p);
			rc = note_first(c, *p);
			if (rc)
				return rc;
		} else if (c->ino_shares) {
			return 0; /* a copy was refused already: not asked again */
		} else if ((st = c->r->status, fix_problem(c, SUFS_PR_DUP_BLOCK, &x))) {
			rc = clone_block(c, *p, level ? BUF_IND : S_ISDIR(in->mode) ? BUF_DIR : BUF_DATA,
					 &nb);
			if (rc == -ENOSPC) {
				/* not made: dup_clear asks what to do instead */
				if (c->r->fixed)
					c->r->fixed--;
				c->ino_shares = 2;
				return 0;
			}
			if (rc)
				return rc;
			*p = nb;
			*changed = 1;
			copy = 1;
		} else {
			/* no copy is no error yet: dup_clear asks next, and its
			 * answer decides (e2fsck's clone question is PR_NO_OK) */
			if (c->stop == GOING)
				c->r->status = st;
			c->ino_shares = 1;
			return 0; /* shared still: its children are the other's */
		}
	}
	if (level == 0)
		return 0;
	span = span_of(c, level - 1);
	rc = buf_get(fs, *p, BUF_IND, &b);
	if (rc)
		return rc;
	for (i = 0; i < fs->ptrs && !rc; i++) {
		child = get64(b->data + IND_PTR(i));
		if (!child)
			continue;
		ch = 0;
		x.blk = child;
		x.num = lblk + i * span;
		if (copy && (!block_in_range(fs, child) || x.num >= limit)) {
			if (fix_problem(c, block_in_range(fs, child) ? SUFS_PR_BLOCK_PAST_SIZE
								     : SUFS_PR_BAD_BLOCK, &x)) {
				child = 0;
				ch = 1;
			}
		} else {
			rc = dup_walk(c, ino, in, &child, level - 1, x.num, &ch);
		}
		if (ch) {
			buf_update(fs, b, IND_PTR(i), 8, UPD_ALLOCINDIR, NULL);
			put64(b->data + IND_PTR(i), child);
		}
	}
	buf_put(fs, b);
	return rc;
}

/*
 * The attribute block of ino, if claimed twice: the first claimant keeps
 * it, a later one is offered a copy, as for a block of its map.
 */
static int dup_xattr(struct chk *c, uint32_t ino, struct sufs_inode *in, int *changed)
{
	struct pctx x = { .ino = ino, .blk = in->xattr_block };
	uint64_t nb;
	int rc, st;

	if (!block_in_range(c->fs, in->xattr_block) || !bit_test(c->dup, in->xattr_block) ||
	    c->stop != GOING)
		return 0;
	if (!bit_test(c->seen, in->xattr_block)) {
		bit_set(c->seen, in->xattr_block);
		return note_first(c, in->xattr_block);
	}
	if (c->ino_shares)
		return 0;
	st = c->r->status;
	if (!fix_problem(c, SUFS_PR_XATTR_DUP, &x)) {
		if (c->stop == GOING)
			c->r->status = st; /* dup_clear's answer decides */
		c->ino_shares = 1;
		return 0;
	}
	rc = clone_block(c, in->xattr_block, BUF_XATTR, &nb);
	if (rc == -ENOSPC) {
		if (c->r->fixed)
			c->r->fixed--;
		c->ino_shares = 2;
		return 0;
	}
	if (rc)
		return rc;
	in->xattr_block = nb;
	*changed = 1;
	return 0;
}

/*
 * The inode keeps a block another claims too: offer to clear it.  Its
 * blocks claimed twice stay with the other claimants (clear_inode frees
 * no block of c->dup); those it claimed first pass to the next claimant
 * in inode order, who then keeps them without a copy.  Returns 1 when it
 * was cleared, 0 when it keeps sharing.
 */
static int dup_clear(struct chk *c, uint32_t ino, const struct sufs_inode *in, size_t mark)
{
	struct pctx x = { .ino = ino };
	size_t i;
	int rc;

	x.str = c->ino_shares == 2 ? "no free block for a copy" : "a copy was refused";
	if (!fix_problem(c, SUFS_PR_DUP_CLEAR, &x)) {
		c->dup_kept = 1;
		return 0;
	}
	for (i = mark; i < c->nfirsts; i++)
		bit_clear(c->seen, c->firsts[i]);
	rc = clear_inode(c, ino, in);
	return rc ? rc : 1;
}

int pass1b(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	uint64_t p = fs->ptrs, first[3] = { SUFS_NDIR, SUFS_NDIR + p, SUFS_NDIR + p + p * p };
	struct sufs_inode in;
	uint32_t ino, i;
	size_t mark, k;
	int rc = 0, changed;

	if (!c->ndups)
		return 0;
	c->seen = calloc((c->nblocks + 7) / 8, 1);
	if (!c->seen)
		return -ENOMEM;
	for (ino = SUFS_ROOT_INO; ino <= c->ninodes && !rc; ino++) {
		if (!ino_ftype(c, ino) || poll_stop(c))
			continue;
		rc = inode_load(fs, ino, &in);
		if (rc || (!inode_has_blocks(&in) && !in.xattr_block))
			continue;
		changed = 0;
		c->ino_shares = 0;
		mark = c->nfirsts;
		for (i = 0; i < SUFS_NBLOCKS && !rc && inode_has_blocks(&in); i++) {
			if (!in.block[i])
				continue;
			rc = dup_walk(c, ino, &in, &in.block[i],
				      i < SUFS_NDIR ? 0 : (int)(i - SUFS_IND + 1),
				      i < SUFS_NDIR ? i : first[i - SUFS_IND], &changed);
		}
		if (!rc && in.xattr_block)
			rc = dup_xattr(c, ino, &in, &changed);
		if (!rc && c->ino_shares) {
			rc = dup_clear(c, ino, &in, mark);
			if (rc == 1) {
				rc = 0;
				continue; /* cleared */
			}
		}
		c->nfirsts = mark; /* kept: what it claims first stays claimed */
		if (!rc && changed)
			rc = inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
	}
	/* a block no later inode claimed after its first claimant was
	 * cleared (it claimed the block twice itself) is claimed by none */
	for (k = 0; !rc && c->stop == GOING && k < c->nfirsts; k++) {
		if (bit_test(c->seen, c->firsts[k]) || !found_test(c, c->firsts[k]))
			continue;
		found_clear(c, c->firsts[k]);
		rc = free_block(fs, c->firsts[k]);
	}
	if (!rc && c->stop == GOING && !c->dup_kept) {
		/* every later claimant has its own copy now: each block has one
		 * claimant, and clearing it later must free the block */
		free(c->dup);
		c->dup = NULL;
	}
	return rc;
}
