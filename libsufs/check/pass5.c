/*
 * pass5.c - pass 5: the bitmaps against what passes 1 to 4 found, then the
 * summaries.
 *
 * Each group's block and inode bitmaps are compared with the blocks found
 * and the inodes in use; a run of consecutive differences of one kind is
 * one problem, and the bits past the end of a group must be set.  Then
 * each group's free and directory counts, and the superblock's totals, are
 * compared with what was found.  Pass 5 also runs early, once, when a
 * repair first needs the library's allocator (prepare_alloc()).
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Report and fix a run [a, b] of one kind of bitmap difference. */
static int bitmap_run(struct chk *c, enum sufs_bitmap which, int used, uint64_t a, uint64_t b)
{
	struct sufs_fs *fs = c->fs;
	struct pctx x = { 0 };
	struct sufs_group *gd, saved;
	uint64_t n, sb_blocks = fs->sb.free_blocks;
	uint32_t sb_inodes = fs->sb.free_inodes;
	unsigned code;
	int rc;

	if (which == SUFS_BITMAP_BLOCK) {
		x.blk = a;
		x.blk2 = b;
		code = used ? SUFS_PR_BLOCKS_UNMARKED : SUFS_PR_BLOCKS_LEAKED;
	} else {
		x.ino = (uint32_t)a;
		x.ino2 = (uint32_t)b;
		code = used ? SUFS_PR_INODES_UNMARKED : SUFS_PR_INODES_LEAKED;
	}
	if (!fix_problem(c, code, &x)) {
		if (used)
			c->alloc_unsafe = 1;
		return 0;
	}
	/* the bits alone: bitmap_set() moves the summaries with them, but
	 * check_summaries() judges those as they stand, against what was found */
	gd = &fs->groups[which == SUFS_BITMAP_BLOCK ? a / fs->sb.blocks_per_group
						    : (a - 1) / fs->sb.inodes_per_group];
	saved = *gd;
	for (n = a; n <= b; n++) {
		if (which == SUFS_BITMAP_BLOCK && !used && fs->nsnaps && snap_needs(fs, n)) {
			/* unchanged since a snapshot was taken, which needs it:
			 * the snapshot takes it, once the bitmaps are right */
			if (c->nsnapclaims == c->capsnapclaims) {
				size_t cap = c->capsnapclaims ? 2 * c->capsnapclaims : 64;
				uint64_t *p = realloc(c->snapclaims, cap * sizeof(*p));
				if (!p)
					return -ENOMEM;
				c->snapclaims = p;
				c->capsnapclaims = cap;
			}
			c->snapclaims[c->nsnapclaims++] = n;
			continue;
		}
		if ((rc = bitmap_set(fs, which, n, used, NULL)) < 0)
			return rc;
	}
	gd->free_blocks = saved.free_blocks;
	gd->free_inodes = saved.free_inodes;
	fs->sb.free_blocks = sb_blocks;
	fs->sb.free_inodes = sb_inodes;
	return 0;
}

/* Compare one group's bitmap with what should be set. */
static int check_bitmap(struct chk *c, enum sufs_bitmap which, uint32_t g)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_group_layout l;
	uint64_t nbits = (uint64_t)fs->bsize * 8, i, first = 0, base, n;
	uint32_t limit;
	struct pctx x = { .num = g };
	struct buf *b;
	int run = -1, pad_bad = 0, rc = 0, want, have;

	if (c->stop != GOING)
		return 0;

	sufs_group_layout(&fs->sb, g, &l);
	if (which == SUFS_BITMAP_BLOCK) {
		limit = (uint32_t)(l.end - l.start);
		base = l.start;
	} else {
		limit = fs->sb.inodes_per_group;
		base = (uint64_t)g * fs->sb.inodes_per_group + 1;
	}
	rc = buf_get(fs, which == SUFS_BITMAP_BLOCK ? l.block_bitmap : l.inode_bitmap,
		     BUF_BITMAP, &b);
	if (rc)
		return rc;
	memcpy(c->scratch, b->data, fs->bsize);
	buf_put(fs, b);
	/* runs of consecutive differences of one kind are one problem */
	for (i = 0; i < limit && !rc; i++) {
		n = base + i;
		/* groups start on a multiple of 8 blocks: skip equal bytes */
		if (which == SUFS_BITMAP_BLOCK && run < 0 && !(i & 7) && i + 8 <= limit &&
		    sparse_get(&c->found, n >> 3) == c->scratch[i >> 3]) {
			i += 7;
			continue;
		}
		if (which == SUFS_BITMAP_BLOCK)
			want = found_test(c, n);
		else
			want = n < SUFS_ROOT_INO || ino_ftype(c, n) != 0;
		have = bit_test(c->scratch, i);
		if (run >= 0 && (want == have || want != run)) {
			rc = bitmap_run(c, which, run, first, n - 1);
			run = -1;
		}
		if (want != have && run < 0) {
			run = want;
			first = n;
		}
	}
	if (!rc && run >= 0)
		rc = bitmap_run(c, which, run, first, base + limit - 1);
	for (i = limit; i < nbits && !pad_bad; i++) {
		if (!(i & 7) && c->scratch[i >> 3] == 0xff)
			i += 7;
		else if (!bit_test(c->scratch, i))
			pad_bad = 1;
	}
	x.str = which == SUFS_BITMAP_BLOCK ? "block" : "inode";
	if (!rc && pad_bad && fix_problem(c, SUFS_PR_BITMAP_PADDING, &x)) {
		rc = buf_get(fs, which == SUFS_BITMAP_BLOCK ? l.block_bitmap : l.inode_bitmap,
			     BUF_BITMAP, &b);
		if (rc)
			return rc;
		buf_update(fs, b, 0, fs->bsize, UPD_BMSAFEMAP, NULL);
		for (i = limit; i < nbits; i++)
			bit_set(b->data, i);
		buf_put(fs, b);
	}
	return rc;
}

static int check_summaries(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_group_layout l;
	uint64_t blk, total_fb = 0, total_fi = 0;
	uint32_t g, ino, fb, fi, dirs, last;
	struct pctx x;
	char text[160];
	int n;

	c->r->dirs = 0;
	for (g = 0; g < fs->sb.groups_count; g++) {
		struct sufs_group *gd = &fs->groups[g];
		sufs_group_layout(&fs->sb, g, &l);
		fb = fi = dirs = 0;
		for (blk = l.first_data; blk < l.end; blk++)
			fb += !found_test(c, blk);
		ino = g * fs->sb.inodes_per_group + 1;
		last = ino + fs->sb.inodes_per_group;
		for (; ino < last; ino++) {
			fi += ino >= SUFS_ROOT_INO && !ino_ftype(c, ino);
			dirs += ino_ftype(c, ino) == SUFS_FT_DIR;
		}
		total_fb += fb;
		total_fi += fi;
		c->r->dirs += dirs;
		if (gd->free_blocks == fb && gd->free_inodes == fi && gd->used_dirs == dirs)
			continue;
		n = snprintf(text, sizeof(text),
			     "free blocks %u, free inodes %u, directories %u; should be %u, %u, %u",
			     gd->free_blocks, gd->free_inodes, gd->used_dirs, fb, fi, dirs);
		(void)n;
		x = (struct pctx){ .num = g, .str = text };
		if (fix_problem(c, SUFS_PR_GROUP_COUNTS, &x)) {
			gd->free_blocks = fb;
			gd->free_inodes = fi;
			gd->used_dirs = dirs;
			fs->gdt_dirty[(uint64_t)g * SUFS_GROUP_DESC_SIZE / fs->bsize] = 1;
		}
	}
	c->r->blocks_used = fs->sb.blocks_count - total_fb;
	c->r->inodes_used = fs->sb.inodes_count - (uint32_t)total_fi;
	if (fs->sb.free_blocks == total_fb && fs->sb.free_inodes == total_fi)
		return 0;
	snprintf(text, sizeof(text), "free blocks %llu, free inodes %u; should be %llu, %llu",
		 (unsigned long long)fs->sb.free_blocks, fs->sb.free_inodes,
		 (unsigned long long)total_fb, (unsigned long long)total_fi);
	x = (struct pctx){ .str = text };
	if (fix_problem(c, SUFS_PR_SB_COUNTS, &x)) {
		fs->sb.free_blocks = total_fb;
		fs->sb.free_inodes = (uint32_t)total_fi;
		fs->sb_dirty = 1;
	}
	return 0;
}

/* Leaked blocks that a snapshot still needs (a claim that a crash cut
 * short): the snapshot takes them, now that the bitmaps are right and
 * allocating the pointers' blocks is safe. */
static int snap_claims(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nsnapclaims && rc >= 0; i++) {
		if (snap_claim(fs, c->snapclaims[i]))
			found_set(c, c->snapclaims[i]);
		else
			rc = bitmap_set(fs, SUFS_BITMAP_BLOCK, c->snapclaims[i], 0, NULL);
	}
	c->nsnapclaims = 0; /* pass 5 may run again (prepare_alloc) */
	return rc < 0 ? rc : 0;
}

int pass5(struct chk *c)
{
	uint32_t g;
	int rc = 0;

	for (g = 0; g < c->fs->sb.groups_count && !rc && !poll_stop(c); g++) {
		rc = check_bitmap(c, SUFS_BITMAP_BLOCK, g);
		if (!rc)
			rc = check_bitmap(c, SUFS_BITMAP_INODE, g);
		pass_progress(c, 5, g + 1, c->fs->sb.groups_count);
	}
	if (!rc && c->nsnapclaims)
		rc = snap_claims(c);
	return rc ? rc : check_summaries(c);
}
