/*
 * ops_int.h - what the files of the operations share (ops/): the small
 * helpers every operation uses, freeing, and the orderings that more than
 * one operation states (a moved directory's pending old name).
 *
 * The operations change inodes, bitmaps and directory blocks through the
 * layers below, which announce every change as an update.  The order in
 * which an operation makes its changes is the order of the three rules of
 * soft updates (DESIGN.md):
 *   1. never point to a structure before it is initialised:
 *      bitmap bit -> inode -> directory entry; link count up -> new name;
 *      data block -> pointer to it;
 *   2. never reuse a resource before every old pointer to it is gone;
 *   3. never reset the old pointer to a live resource before the new one
 *      is set.
 * The link counts and sizes that callers see change at once.
 *
 * The files: read.c (stat, lookup, readdir, read, readlink, path names),
 * names.c (making and removing names), rename.c, free.c (freeing, files
 * held open), data.c (write, truncate, punch, setattr), fsync.c, xattr.c
 * (extended attributes and ACLs).
 */
#ifndef SUFS_OPS_INT_H
#define SUFS_OPS_INT_H

#include "sufs_int.h"

#include <errno.h>
#include <sys/stat.h>

static inline int writable(struct sufs_fs *fs)
{
	return (fs->flags & SUFS_OPEN_RDWR) ? 0 : -EROFS;
}

/* Load an inode that must be in use. */
static inline int load_live(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in)
{
	int err;

	if (!inode_valid_ino(fs, ino))
		return -EINVAL;
	err = inode_load(fs, ino, in);
	if (err)
		return err;
	return in->mode ? 0 : -ENOENT;
}

/* Load an inode an operation is about to change: a snapshot file is the
 * library's own (snap.c), -EPERM to everyone else. */
static inline int load_mutable(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in)
{
	int err = load_live(fs, ino, in);

	return !err && snap_is_file(fs, ino) ? -EPERM : err;
}

static inline void set_now(struct sufs_fs *fs, struct sufs_inode *in, int a, int m, int c)
{
	int64_t sec;
	uint32_t nsec;

	fs_now(fs, &sec, &nsec);
	if (a) {
		in->atime = sec;
		in->atime_ns = nsec;
	}
	if (m) {
		in->mtime = sec;
		in->mtime_ns = nsec;
	}
	if (c) {
		in->ctime = sec;
		in->ctime_ns = nsec;
	}
}

static inline int check_name(const char *name, size_t len)
{
	if (len == 0)
		return -ENOENT;
	if (len > SUFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, 0, len))
		return -EINVAL;
	return 0;
}

static inline int is_dot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/* The root's ".": what sufs_namei_parent() makes of "/" */
static inline int is_root_dot(uint32_t dir, const char *name, size_t len)
{
	return dir == SUFS_ROOT_INO && len == 1 && name[0] == '.';
}

/* Load a directory that a name goes into or out of. */
static inline int load_parent(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din)
{
	int err = writable(fs);

	if (!err)
		err = load_live(fs, dir, din);
	if (!err && !S_ISDIR(din->mode))
		err = -ENOTDIR;
	if (!err && din->links == 0)
		err = -ENOENT; /* removed */
	return err;
}

/* A directory's times after a change of its entries: outside the ordering. */
static inline int touch_dir(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din,
		     const struct waits *iw)
{
	set_now(fs, din, 0, 1, 1);
	return inode_store(fs, dir, din, UPD_INODEDEP, iw, NULL);
}


/* ---- freeing (free.c) --------------------------------------------------------- */

struct blist {
	uint64_t *blk;
	size_t n, cap;
};

/* Deferred: the pointers to these blocks are cleared on disk (rule 2). */
struct freeing {
	uint32_t ino;             /* an inode number to free too, or 0 */
	int was_dir;
	struct blist blocks;
};

int blist_add(struct blist *l, uint64_t blk);
/* sufs_block_fn collecting every good block into a struct blist */
int collect_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
	       int bad, void *arg);
/* deps_defer() work: free the blocks, then the inode number, of a freeing */
int freeing_run(struct sufs_fs *fs, void *arg);
/* Free an inode no name reaches once w (its last name's removal) is on disk. */
int inode_free(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
	       const struct waits *w);
/* How many holds a file has (sufs_hold()). */
uint32_t hold_count(const struct sufs_fs *fs, uint32_t ino);

/* ---- extended attributes (xattr.c), for setattr (data.c) ---------------------- */

/* chmod: the access ACL follows the new mode in *in (stored by the caller). */
int xattr_acl_chmod(struct sufs_fs *fs, struct sufs_inode *in);

/* ---- removing names (names.c), for rename.c --------------------------------- */

/* Drop one link of ino once removal is on disk; the last one frees it. */
int drop_link(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, upd_id removal);
/* A renamed directory's old-name removal, and a wait for the newest one. */
int moved_note(struct sufs_fs *fs, uint32_t ino, upd_id removal);
void moved_wait(struct sufs_fs *fs, uint32_t ino, struct waits *w);
/* Before renaming directory ino again: its last rename's removal written
 * now. */
int moved_settle(struct sufs_fs *fs, uint32_t ino);
/* The first names of the new directories from dir up: a wait for each
 * (before a name rename adds in dir lets the old one go); those past w's
 * room in w->more (waits_done()). */
int reachable_wait(struct sufs_fs *fs, uint32_t dir, struct waits *w);
/* A moved directory's new "..", and a wait for the newest of each
 * directory from dir up (before a ".." names dir: no loop on disk), as
 * reachable_wait() adds them. */
int dotdot_note(struct sufs_fs *fs, uint32_t ino, upd_id dotdot);
int dotdots_wait(struct sufs_fs *fs, uint32_t dir, struct waits *w);
/* A name rename took out of dir, and a wait for every such one pending
 * (before dir itself goes): in w->more, which has no array yet. */
int removal_note(struct sufs_fs *fs, uint32_t dir, upd_id removal);
int removals_wait(struct sufs_fs *fs, uint32_t dir, struct waits *w);
/* Free the array these waits (and a path's, past w's room) left in w. */
void waits_done(struct waits *w);
/* The update that frees ino's inode bytes, if pending (to wait for it). */
upd_id inode_last_update(struct sufs_fs *fs, uint32_t ino);
/* The newest pending change of dir's size or block pointers. */
upd_id dir_map_update(struct sufs_fs *fs, uint32_t dir);

#endif /* SUFS_OPS_INT_H */
