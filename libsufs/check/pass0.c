/*
 * pass0.c - pass 0: the superblock and the group descriptors.
 *
 * The superblock is chosen before the file system is opened
 * (choose_super()): the primary when it is good, else a backup, looked
 * for where the primary's geometry puts one, then in every geometry,
 * group by group.  Once the file system is open, the fields that
 * sufs_super_check() does not judge (check_super_fields()) and the group
 * descriptors that failed their checks when read (check_groups()) are
 * reported.  The snapshot slots, in the superblock too, are judged after
 * pass 4, when the files they name are known (pass4.c).
 */
#include "config.h"
#include "check_int.h"

#include <stdio.h>

/* ---- choosing the superblock --------------------------------------------- */

/* Read and judge the superblock at off: 0 and *sb when it is good. */
static int read_super(struct sufs_dev *dev, uint64_t off, struct sufs_super *sb,
		      const char **why)
{
	uint8_t raw[SUFS_SB_SIZE];
	int err;

	*why = "unreadable";
	memset(sb, 0, sizeof(*sb)); /* what the callers read of a superblock not read */
	if (!dev->is_blockdev && (dev->size < SUFS_SB_SIZE || off > dev->size - SUFS_SB_SIZE)) {
		*why = "the image is too small to hold a superblock there";
		return -SUFS_ESHORT;
	}
	err = sufs_dev_read(dev, off, raw, sizeof(raw));
	if (err)
		return err;
	sufs_super_decode(raw, sb);
	if (sb->magic != SUFS_MAGIC) {
		*why = "bad magic number";
		return -SUFS_EMAGIC;
	}
	if (sb->checksum != sufs_super_csum(raw)) {
		*why = "bad checksum";
		return -SUFS_ECHECKSUM;
	}
	return sufs_super_check(sb, dev->is_blockdev && !dev->size ? 0 : dev->size, why);
}

/* The search for a backup superblock. */
struct sbsearch {
	struct sufs_dev *dev;
	int inside;                     /* a place looked at lies within the device */
	int csum_only;                  /* a backup whose checksum alone is bad was seen */
	uint64_t csum_only_off;         /* the first such */
	struct sufs_super csum_only_sb;
};

/*
 * A backup is good if it is where its own geometry says it is.  The first
 * one in its place whose fields hold together but whose checksum does not
 * match is remembered: the best there is when no copy is good.
 */
static int try_backup(struct sbsearch *s, uint64_t off, struct sufs_super *sb)
{
	const char *why;
	int err = read_super(s->dev, off, sb, &why);

	if (err && err != -SUFS_ECHECKSUM)
		return 0;
	if (!sb->sb_group || !sufs_group_has_backup(sb->sb_group) ||
	    (uint64_t)sb->sb_group * sb->blocks_per_group * sb->block_size != off)
		return 0;
	if (!err)
		return 1;
	if (!s->csum_only &&
	    sufs_super_check(sb, s->dev->is_blockdev && !s->dev->size ? 0 : s->dev->size,
			     NULL) == 0) {
		s->csum_only = 1;
		s->csum_only_off = off;
		s->csum_only_sb = *sb;
	}
	return 0;
}

/* The groups that hold a backup, in order: 1, 3, 5, 7, 9, 25, 27, ...;
 * 0 after the last. */
static uint32_t next_backup_group(uint32_t g)
{
	do {
		if (g == UINT32_MAX)
			return 0;
		g++;
	} while (!sufs_group_has_backup(g));
	return g;
}

/* Try the backup of group g in the geometry (bs, bpg). */
static int try_group(struct sbsearch *s, uint32_t bs, uint32_t bpg, uint32_t g, uint64_t *off,
		     struct sufs_super *sb)
{
	uint64_t size = s->dev->size;

	if (bpg < 64 || bpg > 8 * bs || bpg % 8)
		return 0;
	if (size) {
		if (size < SUFS_SB_SIZE || (uint64_t)bpg * bs > (size - SUFS_SB_SIZE) / g)
			return 0; /* past the end */
	} else if (g != 1) {
		return 0; /* a device of unknown size: group 1 only */
	}
	s->inside = 1;
	*off = (uint64_t)g * bpg * bs;
	return try_backup(s, *off, sb);
}

/* Look for the backup of group g in a geometry of block size bs: the group
 * size first_bpg first, then every group size from the default down. */
static int find_backup(struct sbsearch *s, uint32_t bs, uint32_t first_bpg, uint32_t g,
		       uint64_t *off, struct sufs_super *sb)
{
	uint32_t bpg;

	if (try_group(s, bs, first_bpg, g, off, sb))
		return 1;
	for (bpg = 8 * bs; bpg >= 64; bpg -= 8)
		if (bpg != first_bpg && try_group(s, bs, bpg, g, off, sb))
			return 1;
	return 0;
}

/*
 * Choose the superblock: the one asked for, else the primary, else the
 * first good backup: where the primary's geometry puts it, else in group 1
 * of any geometry (the primary's block size first), else in group 3 of any
 * geometry, and so on through the groups that hold backups, as far as the
 * device reaches.  When no copy is good, one whose checksum alone is bad:
 * the primary, else the first such backup.  Returns 0 for the primary, 1
 * for another, 2 for a primary whose checksum alone is bad and that has no
 * good backup, 3 for the one asked for over a sound primary, or an error.
 */
int choose_super(struct chk *c, struct sufs_dev *dev, uint64_t *off,
		 struct sufs_super *sb, const char **why)
{
	struct sufs_super p;
	uint64_t cand;
	struct sbsearch s = { .dev = dev };
	uint32_t bs, pbs = 0, g;
	unsigned n;
	int err;

	if (c->o->sb_offset && c->o->sb_offset != SUFS_SB_OFFSET) {
		*off = c->o->sb_offset;
		err = read_super(dev, *off, sb, why);
		if (err)
			return err;
		return read_super(dev, SUFS_SB_OFFSET, &p, why) == 0 ? 3 : 1;
	}
	*off = SUFS_SB_OFFSET;
	err = read_super(dev, SUFS_SB_OFFSET, &p, why);
	if (!err) {
		*sb = p;
		return 0;
	}
	if (err == -SUFS_ETRUNCATED || (err != -SUFS_EMAGIC && err != -SUFS_ESHORT &&
					err != -SUFS_ECHECKSUM &&
					err != -SUFS_ECORRUPT && err != -SUFS_EVERSION &&
					err != -SUFS_EFEATURE))
		return err;
	if (p.magic == SUFS_MAGIC && p.block_size >= SUFS_MIN_BLOCK_SIZE &&
	    p.block_size <= SUFS_MAX_BLOCK_SIZE && !(p.block_size & (p.block_size - 1))) {
		pbs = p.block_size;
		if (p.blocks_per_group && p.groups_count && p.groups_count < (1u << 20)) {
			for (n = 0; n < 4 && sufs_backup_offset(&p, n, &cand) == 0; n++) {
				if (try_backup(&s, cand, sb)) {
					*off = cand;
					return 1;
				}
			}
		}
	}
	/* group 1 of every geometry, then group 3 of every geometry, ... */
	for (g = 1; g; g = next_backup_group(g)) {
		s.inside = 0;
		if (pbs && find_backup(&s, pbs, p.blocks_per_group, g, off, sb))
			return 1;
		for (bs = SUFS_MIN_BLOCK_SIZE; bs <= SUFS_MAX_BLOCK_SIZE; bs *= 2)
			if (bs != pbs && find_backup(&s, bs, 8 * bs, g, off, sb))
				return 1;
		if (!s.inside)
			break;
	}
	*off = SUFS_SB_OFFSET;
	/* no good backup (a file system of one group has none): a primary
	 * whose only fault is its checksum is still the best there is */
	if (err == -SUFS_ECHECKSUM &&
	    sufs_super_check(&p, dev->is_blockdev && !dev->size ? 0 : dev->size, NULL) == 0) {
		*sb = p;
		return 2;
	}
	/* and then a backup whose only fault is its checksum */
	if (s.csum_only) {
		*off = s.csum_only_off;
		*sb = s.csum_only_sb;
		return 1;
	}
	return err;
}

/* ---- after opening: its fields, the group descriptors -------------------- */

/* The superblock fields sufs_super_check() does not judge. */
void check_super_fields(struct chk *c, int backup)
{
	struct sufs_super *sb = &c->fs->sb;
	struct pctx x;

	x = (struct pctx){ .str = "sb_group", .num = sb->sb_group, .num2 = 0 };
	if (!backup && sb->sb_group && fix_problem(c, SUFS_PR_SB_FIELD, &x))
		c->fs->sb_dirty = 1; /* written as group 0's copy */
	x = (struct pctx){ .str = "state", .num = sb->state,
			   .num2 = sb->state & SUFS_STATE_CLEAN };
	if (sb->state & ~SUFS_STATE_CLEAN && fix_problem(c, SUFS_PR_SB_FIELD, &x))
		sb->state &= SUFS_STATE_CLEAN;
	x = (struct pctx){ .str = "flags", .num = sb->flags,
			   .num2 = sb->flags & SUFS_FLAG_NEEDS_FSCK };
	if (sb->flags & ~SUFS_FLAG_NEEDS_FSCK && fix_problem(c, SUFS_PR_SB_FIELD, &x))
		sb->flags &= SUFS_FLAG_NEEDS_FSCK;
	x = (struct pctx){ .str = "features_compat", .num = sb->features_compat };
	if (sb->features_compat && fix_problem(c, SUFS_PR_SB_FIELD, &x))
		sb->features_compat = 0;
	/* features_ro_compat: the library opens an image with a bit it does
	 * not know read-only (a check that may write is refused); one -n
	 * runs on checks what this version knows of it */
}

void check_groups(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	uint8_t raw[SUFS_GROUP_DESC_SIZE];
	struct sufs_group gd;
	const char *field;
	char what[64];
	struct pctx x;
	uint32_t g;

	for (g = 0; g < fs->sb.groups_count; g++) {
		if (!fs->group_bad[g])
			continue;
		x = (struct pctx){ .num = g, .str = "its checksum does not match" };
		if (fs->group_bad[g] == GROUP_BAD_FIELD) {
			/* which field: the decoded copy, sealed, checked again */
			sufs_group_encode(&fs->groups[g], g, raw);
			sufs_group_check(&fs->sb, g, raw, &gd, &field);
			snprintf(what, sizeof(what), "field %s", field ? field : "?");
			x.str = what;
		}
		if (fix_problem(c, SUFS_PR_GROUP_DESC_BAD, &x))
			fs->gdt_dirty[(uint64_t)g * SUFS_GROUP_DESC_SIZE / fs->bsize] = 1;
	}
}
