/*
 * pass4.c - pass 4: reference counts; then the snapshot slots, and the
 * snapshot files that no slot names.
 *
 * An inode in use that no name reaches is a removal whose freeing did not
 * finish (a leak: cleared) or damage (connected to /lost+found).  Every
 * other inode's link count must be the number of names passes 2 and 3
 * counted.
 *
 * Then, with every inode's type and names known, each slot of the
 * superblock must name a snapshot file (check_snap_slots()), and a file
 * with the snapshot flag that no slot names is removed (snap_orphans()).
 * Passes 1 and 2 note what these need (found.c): the flagged files and
 * where each is named, /.snap and the files named in it.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

static int snap_slot_of(struct chk *c, uint32_t ino)
{
	uint32_t i;

	for (i = 0; i < SUFS_SNAP_SLOTS; i++)
		if (c->fs->sb.snap[i].ino == ino)
			return 1;
	return 0;
}

/* ---- reference counts ---------------------------------------------------- */

/* A snapshot file no slot names and no name reaches: a crash while one
 * was taken (its flag on disk, its name in /.snap not yet), which
 * snap_orphans() removes as one with a name. */
static int snap_orphan_unnamed(struct chk *c, uint32_t ino, const struct sufs_inode *in)
{
	return S_ISREG(in->mode) && (in->flags & SUFS_IFLAG_SNAPSHOT) && !snap_slot_of(c, ino);
}

int pass4(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode in;
	struct pctx x;
	uint32_t ino, n;
	unsigned code;
	int rc = 0;

	for (ino = SUFS_ROOT_INO; ino <= c->ninodes && !rc && !poll_stop(c); ino++) {
		if (!ino_ftype(c, ino))
			continue;
		if (ino_single(c, ino) && ino_names(c, ino) == 1)
			continue; /* one link, one name: nothing to read again */
		rc = inode_load(fs, ino, &in);
		if (rc == -SUFS_ECHECKSUM)
			rc = 0;
		if (rc)
			break;
		n = ino_names(c, ino);
		x = (struct pctx){ .ino = ino, .num = in.size };
		if (n == 0 && snap_orphan_unnamed(c, ino, &in))
			continue; /* snap_orphans() removes it */
		if (n == 0 && ino_ftype(c, ino) != SUFS_FT_DIR) {
			/* no name and no link: a removal whose freeing did not
			 * finish, a leak to clear whatever it holds */
			if (in.size == 0)
				code = SUFS_PR_UNATTACHED_EMPTY;
			else if (in.links == 0 || fixes_leaks_only(c))
				code = SUFS_PR_UNATTACHED_CLEAR;
			else
				code = SUFS_PR_UNATTACHED;
			if (!fix_problem(c, code, &x))
				continue;
			if (code != SUFS_PR_UNATTACHED) {
				rc = clear_inode(c, ino, &in);
				continue;
			}
			rc = reconnect(c, ino);
			if (rc == -ENOSPC || rc == -ENOTDIR || rc == -EAGAIN ||
			    rc == -SUFS_ECORRUPT) {
				fix_failed(c);
				rc = 0;
				continue;
			}
			if (rc)
				break;
			n = ino_names(c, ino);
			rc = inode_load(fs, ino, &in);
			if (rc == -SUFS_ECHECKSUM)
				rc = 0;
			if (rc)
				break;
		}
		if (n == 0 || n == UINT16_MAX || in.links == n)
			continue;
		x.num = in.links;
		x.num2 = n;
		if (fix_problem(c, in.links > n ? SUFS_PR_LINKS_HIGH : SUFS_PR_LINKS_LOW, &x)) {
			in.links = n;
			rc = inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
		}
		pass_progress(c, 4, ino, c->ninodes);
	}
	return rc;
}

/* ---- snapshot slots and orphans ------------------------------------------ */

/* Why the file slot i names is not a snapshot file; NULL when it is. */
static const char *snap_slot_problem(struct chk *c, uint32_t i)
{
	uint32_t ino = c->fs->sb.snap[i].ino;
	struct sufs_inode in;
	const char *why;
	int rc;

	if (ino > c->ninodes || ino_ftype(c, ino) != SUFS_FT_REG)
		return "not a regular file in use";
	rc = inode_load(c->fs, ino, &in);
	if (rc && rc != -SUFS_ECHECKSUM) /* a checksum is pass 1's problem */
		return "its inode cannot be read";
	if ((why = snap_file_problem(c->fs, &in)) != NULL)
		return why;
	if (!(c->snap_named & 1u << i))
		return "not named in /.snap";
	return NULL;
}

/* Does the snapshot in slot read as a file system, this one as it was?
 * 0, or the error, and in *why what of it does not. */
static int slot_readable(struct sufs_fs *fs, unsigned slot, const char **why)
{
	struct sufs_dev *view;
	struct sufs_fs *sfs;
	uint32_t g;
	int err;

	*why = "the copies of its bitmaps";
	err = snap_view_open(fs, slot, "in a slot", &view);
	if (err)
		return err;
	*why = "its copy of the superblock";
	err = sufs_open_dev(view, 0, 0, &sfs);
	if (err == -SUFS_ECHECKSUM || err == -SUFS_ECORRUPT) {
		/* the open checks the descriptors too: when the superblock
		 * opens with checksums aside, a bad descriptor is to blame */
		if (sufs_open_dev(view, SUFS_OPEN_IGNORE_CSUM, 0, &sfs) == 0) {
			for (g = 0; g < sfs->sb.groups_count; g++)
				if (sfs->group_bad[g])
					*why = "its copy of the group descriptors";
			sufs_close(sfs); /* and the view */
			return err;
		}
	}
	if (err) {
		sufs_dev_close(view);
		return err;
	}
	if (sfs->sb.block_size != fs->sb.block_size ||
	    sfs->sb.blocks_count != fs->sb.blocks_count ||
	    sfs->sb.blocks_per_group != fs->sb.blocks_per_group ||
	    sfs->sb.inodes_per_group != fs->sb.inodes_per_group)
		err = -SUFS_ECORRUPT; /* a snapshot is of this file system */
	else
		err = sufs_super_check_counts(&sfs->sb, NULL);
	sufs_close(sfs);
	return err;
}

/*
 * After pass 4, when every inode's type and name are known: each slot
 * names a snapshot file (regular, with the snapshot flag, as large as the
 * file system, named in /.snap) that no other slot names, and which reads
 * as this file system was (its superblock and descriptors, and a copy of
 * every block bitmap).  A slot that does not is cleared: its file, if any,
 * is then one that no slot names (snap_orphans()).
 */
int check_snap_slots(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	struct pctx x;
	uint32_t i, j, ino;
	unsigned code;
	int rc;

	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		ino = fs->sb.snap[i].ino;
		if (!ino)
			continue;
		/* two slots naming one file: deleting either snapshot would
		 * take the other's file with it; the newer slot goes */
		for (j = 0; j < i && fs->sb.snap[j].ino != ino; j++)
			;
		if (j < i) {
			x = (struct pctx){ .num = j, .num2 = i, .ino = ino };
			if (fix_problem(c, SUFS_PR_SNAP_SLOT_DUP, &x)) {
				memset(&fs->sb.snap[i], 0, sizeof(fs->sb.snap[i]));
				fs->sb_dirty = 1;
			}
			continue;
		}
		x = (struct pctx){ .num = i, .ino = ino, .str = snap_slot_problem(c, i) };
		if (x.str) {
			code = SUFS_PR_SNAP_SLOT_BAD;
		} else if (fs->sb.snap[i].flags & SUFS_SNAP_BROKEN) {
			continue; /* no copies to read: it can only be deleted */
		} else {
			rc = slot_readable(fs, i, &x.str2);
			if (!rc)
				continue;
			if (rc == -ENOMEM)
				return rc;
			x.str = sufs_strerror(rc);
			code = SUFS_PR_SNAP_UNREADABLE;
		}
		if (fix_problem(c, code, &x)) {
			memset(&fs->sb.snap[i], 0, sizeof(fs->sb.snap[i]));
			fs->sb_dirty = 1;
			snap_remove_active(fs, i);
		}
	}
	return 0;
}

/*
 * Files with the snapshot flag that no slot names.  The slot is written
 * last when a snapshot is taken and cleared first when one is deleted
 * (snap.c), so a crash in either leaves such a file in /.snap: a leak.  It
 * is removed, its name and its blocks with it, as sufs-snap delete would.
 * One whose slot was cleared above goes the same way, and so does one no
 * name reaches (its flag reached the disk, its name not; pass 4 leaves it
 * here) or whose /.snap no name reaches.  One named more than once is no
 * longer the snapshots' to remove, and no crash leaves it so: it stays, a
 * plain file without the flag.
 */
int snap_orphans(struct chk *c)
{
	struct sufs_inode in;
	struct buf *b;
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nflagged && !rc && c->stop == GOING; i++) {
		const struct flagged *f = &c->flagged[i];
		struct pctx x = { .ino = f->ino, .dir = f->dir, .str = f->name };

		if (ino_ftype(c, f->ino) != SUFS_FT_REG || snap_slot_of(c, f->ino))
			continue;
		rc = inode_load(c->fs, f->ino, &in);
		if (rc == -SUFS_ECHECKSUM)
			rc = 0;  /* pass 1 asked about it */
		if (rc || !(in.flags & SUFS_IFLAG_SNAPSHOT))
			continue;
		if (ino_names(c, f->ino) > 1) {
			/* no crash names one twice: damage; it stays a plain file */
			if (fix_problem(c, SUFS_PR_SNAP_FLAG, &x)) {
				in.flags &= ~SUFS_IFLAG_SNAPSHOT;
				rc = inode_store(c->fs, f->ino, &in, UPD_INODEDEP, NULL, NULL);
			}
			continue;
		}
		if (!fix_problem(c, SUFS_PR_SNAP_ORPHAN, &x))
			continue;
		if (ino_names(c, f->ino) == 1) {
			rc = buf_get(c->fs, f->name_blk, BUF_DIR, &b);
			if (rc)
				break;
			if (get32(b->data + f->name_off + DE_INO) == f->ino) {
				buf_update(c->fs, b, f->name_off, 4, UPD_DIRREM, NULL);
				put32(b->data + f->name_off + DE_INO, 0);
			}
			buf_put(c->fs, b);
		}
		rc = clear_inode(c, f->ino, &in);
	}
	return rc;
}
