/*
 * rename.c - rename, in one directory or across directories, over an
 * existing name, moving a directory with its "..".
 */
#include "config.h"
#include "ops_int.h"

#include <stdlib.h>

/* Is dir inside the tree of top (or top itself)?  Walks ".." up to the root. */
static int is_within(struct sufs_fs *fs, uint32_t dir, uint32_t top)
{
	unsigned depth = 0;
	uint32_t up;
	int err;

	while (dir != top) {
		if (dir == SUFS_ROOT_INO)
			return 0;
		err = sufs_lookup(fs, dir, "..", 2, &up);
		if (err)
			return err;
		if (up == dir || ++depth > fs->sb.inodes_count)
			return -SUFS_ECORRUPT;
		dir = up;
	}
	return 1;
}

/* A rename in progress: what it acts on, and the updates later steps
 * wait for. */
struct rename {
	struct sufs_fs *fs;
	uint32_t sdir, ddir;                /* the old name's directory, the new one's */
	const char *sname, *dname;
	size_t slen, dlen;
	struct sufs_inode sdin, ddin;
	uint32_t ino, tino;                 /* what moves; what the new name named (0) */
	struct sufs_inode in, tin;
	int is_dir, moving;                 /* moving: a directory to another parent */
	upd_id named, removed, dotdot;      /* the new name, the old one's removal, ".." */
};

/* Load and check both sides: 0 to go on, 1 when there is nothing to do
 * (two names of one file), or an error. */
static int rename_check(struct rename *r)
{
	struct sufs_fs *fs = r->fs;
	int err = check_name(r->sname, r->slen);

	if (!err)
		err = check_name(r->dname, r->dlen);
	if (!err && (is_root_dot(r->sdir, r->sname, r->slen) ||
		     is_root_dot(r->ddir, r->dname, r->dlen)))
		err = -EBUSY; /* the root: "/" */
	if (!err && (is_dot(r->sname, r->slen) || is_dot(r->dname, r->dlen)))
		err = -EINVAL;
	if (!err)
		err = load_parent(fs, r->sdir, &r->sdin);
	if (!err)
		err = load_parent(fs, r->ddir, &r->ddin);
	if (!err)
		err = dir_lookup(fs, r->sdir, &r->sdin, r->sname, r->slen, &r->ino);
	if (!err && !inode_valid_ino(fs, r->ino))
		err = -SUFS_ECORRUPT; /* an entry naming an inode the image cannot have */
	if (!err)
		err = load_mutable(fs, r->ino, &r->in);
	if (!err && snap_dir_pinned(fs, r->sdir, r->sname, r->slen))
		err = -EPERM;
	if (err)
		return err;
	r->is_dir = S_ISDIR(r->in.mode);
	r->moving = r->is_dir && r->sdir != r->ddir;
	if (r->moving) {
		err = is_within(fs, r->ddir, r->ino);
		if (err)
			return err < 0 ? err : -EINVAL;
	}
	err = dir_lookup(fs, r->ddir, &r->ddin, r->dname, r->dlen, &r->tino);
	if (err == -ENOENT)
		r->tino = 0;
	else if (err)
		return err;
	else if (!inode_valid_ino(fs, r->tino))
		return -SUFS_ECORRUPT;
	if (r->tino == r->ino)
		return 1; /* two names of one file: nothing to do */
	if (r->tino) {
		err = load_mutable(fs, r->tino, &r->tin);
		if (err)
			return err;
		if (S_ISDIR(r->tin.mode) && !r->is_dir)
			return -EISDIR;
		if (!S_ISDIR(r->tin.mode) && r->is_dir)
			return -ENOTDIR;
		if (S_ISDIR(r->tin.mode)) {
			err = dir_is_empty(fs, r->tino, &r->tin);
			if (err <= 0)
				return err < 0 ? err : -ENOTEMPTY;
		}
	}
	if (r->moving && !r->tino && r->ddin.links >= SUFS_LINK_MAX)
		return -EMLINK;
	return 0;
}

/*
 * The new name.  A directory's new name waits for its old one to be on
 * disk (if that is still on its way), so that its ".." always confirms a
 * name that is on disk, and its parent's raised link count is there before
 * any name of it; the link count goes up before the new name exists (rule
 * 1); the new name goes over the old target's if there is one (a replaced
 * directory's other pending names go first, as in rmdir).
 */
static int rename_new_name(struct rename *r)
{
	struct sufs_fs *fs = r->fs;
	struct waits w = { 0 }, dw = { 0 };
	upd_id raised, src = 0;
	uint32_t old;
	int err = 0;

	/* a third name of a directory never waits for its second's rename */
	if (r->is_dir)
		err = moved_settle(fs, r->ino);
	if (!err)
		err = dir_entry_pending(fs, r->sdir, &r->sdin, r->sname, r->slen, &src, NULL);
	if (!r->is_dir)
		src = 0;
	if (err)
		return err;
	r->in.links++;
	set_now(fs, &r->in, 0, 0, 1);
	err = inode_store(fs, r->ino, &r->in, UPD_INODEDEP, NULL, &raised);
	if (err)
		return err;
	waits_add(&w, raised);
	waits_add(&w, src);
	if (r->tino && S_ISDIR(r->tin.mode)) {
		moved_wait(fs, r->tino, &w);
		err = removals_wait(fs, r->tino, &w); /* it goes: its renamed-out names first */
		if (err)
			return err;
	}
	if (r->tino)
		err = dir_set(fs, r->ddir, &r->ddin, r->dname, r->dlen, r->ino,
			      sufs_ftype_of_mode(r->in.mode), UPD_DIRADD, &w, &old, &r->named);
	else
		err = dir_add(fs, r->ddir, &r->ddin, r->dname, r->dlen, r->ino,
			      sufs_ftype_of_mode(r->in.mode), &w, &dw, &r->named);
	waits_done(&w);
	if (err) {
		r->in.links--;
		inode_store(fs, r->ino, &r->in, UPD_INODEDEP, NULL, NULL);
		return err;
	}
	return touch_dir(fs, r->ddir, &r->ddin, &dw);
}

/*
 * A moved directory's ".." names the new parent once the new name is on
 * disk, and the new parent's link count for it is raised before that (rule
 * 1); the old name goes only after (rename_old_name()), so that at any
 * crash the name ".." confirms is on disk.  It waits too for the newest
 * ".." change of the new parent and of each directory above it
 * (dotdots_wait(): no loop on disk).
 */
static int rename_dotdot(struct rename *r)
{
	struct sufs_fs *fs = r->fs;
	struct waits w = { 0 };
	uint32_t old;
	upd_id id;
	int err = 0;

	waits_add(&w, r->named);
	if (!r->tino) {
		err = load_live(fs, r->ddir, &r->ddin);
		if (!err) {
			r->ddin.links++;
			err = inode_store(fs, r->ddir, &r->ddin, UPD_INODEDEP, NULL, &id);
			waits_add(&w, id);
		}
	} /* else the replaced directory's ".." link passes to us */
	if (!err)
		err = dotdots_wait(fs, r->ddir, &w);
	if (!err)
		err = dir_set(fs, r->ino, &r->in, "..", 2, r->ddir, SUFS_FT_DIR, UPD_DIRADD, &w, &old,
			      &r->dotdot);
	waits_done(&w);
	if (!err)
		err = dotdot_note(fs, r->ino, r->dotdot);
	return err;
}

/*
 * The old name goes, only once the new one (and a moved directory's "..")
 * is on disk (rule 3), and reachable there: the first names of the new
 * directories on the way up from the new name's (reachable_wait(); a
 * directory made by mkdir whose name is not on disk reaches nothing), and
 * the new name's directory inode, with its size and pointer to the block
 * that holds the new name (one it grew by; a name in a block the
 * directory does not map is not reachable); the link count comes down
 * after it.  The old name's directory keeps the removal, for its own
 * removal to wait for (removal_note()).
 */
static int rename_old_name(struct rename *r)
{
	struct sufs_fs *fs = r->fs;
	struct waits w = { 0 };
	uint32_t old;
	int err = 0;

	waits_add(&w, r->named);
	waits_add(&w, r->dotdot);
	waits_add(&w, dir_map_update(fs, r->ddir));
	err = reachable_wait(fs, r->ddir, &w);
	if (!err && fs->broken_rule == 3) {
		w.n = 0;
		waits_done(&w);
	}
	if (!err && r->sdir == r->ddir)
		err = load_live(fs, r->sdir, &r->sdin); /* the directory may have grown */
	if (!err)
		err = dir_set(fs, r->sdir, &r->sdin, r->sname, r->slen, 0, 0, UPD_DIRREM, &w, &old,
			      &r->removed);
	waits_done(&w);
	if (!err && r->is_dir)
		err = moved_note(fs, r->ino, r->removed);
	if (!err)
		err = removal_note(fs, r->sdir, r->removed);
	if (err)
		return err;
	w.n = 0;
	waits_add(&w, r->removed);
	r->in.links--;
	return inode_store(fs, r->ino, &r->in, UPD_INODEDEP, &w, NULL);
}

/* What lost a name or a ".." link: the target (its new name took its
 * place), and the parents' link counts. */
static int rename_counts(struct rename *r)
{
	struct sufs_fs *fs = r->fs;
	struct waits w = { 0 };
	int err = 0;

	if (r->tino)
		err = drop_link(fs, r->tino, &r->tin, r->named);
	if (!err && r->moving) {
		/* the old parent loses the ".." link once ".." has moved on disk */
		waits_add(&w, r->dotdot);
		err = load_live(fs, r->sdir, &r->sdin);
		if (!err) {
			r->sdin.links--;
			err = inode_store(fs, r->sdir, &r->sdin, UPD_INODEDEP, &w, NULL);
		}
	} else if (!err && r->tino && S_ISDIR(r->tin.mode)) {
		/* a directory replaced in place: its ".." link to ddir goes with it */
		waits_add(&w, inode_last_update(fs, r->tino));
		err = load_live(fs, r->ddir, &r->ddin);
		if (!err) {
			r->ddin.links--;
			err = inode_store(fs, r->ddir, &r->ddin, UPD_INODEDEP, &w, NULL);
		}
	}
	if (!err && r->sdir != r->ddir) {
		err = load_live(fs, r->sdir, &r->sdin);
		if (!err)
			err = touch_dir(fs, r->sdir, &r->sdin, NULL);
	}
	return err;
}

static int do_rename(struct sufs_fs *fs, uint32_t sdir, const char *sname, size_t slen,
		     uint32_t ddir, const char *dname, size_t dlen)
{
	struct rename r = { .fs = fs, .sdir = sdir, .ddir = ddir, .sname = sname,
			    .dname = dname, .slen = slen, .dlen = dlen };
	int err = rename_check(&r);

	if (err)
		return err > 0 ? 0 : err;
	err = rename_new_name(&r);
	if (!err && r.moving)
		err = rename_dotdot(&r);
	if (!err)
		err = rename_old_name(&r);
	if (!err)
		err = rename_counts(&r);
	return err;
}

int sufs_rename(struct sufs_fs *fs, uint32_t sdir, const char *sname, size_t slen,
		uint32_t ddir, const char *dname, size_t dlen)
{
	return fs_op_end(fs, do_rename(fs, sdir, sname, slen, ddir, dname, dlen));
}
