/*
 * names.c - making and removing names: create, mknod, mkdir, symlink,
 * link, unlink, rmdir.
 */
#include "config.h"
#include "ops_int.h"

#include <assert.h>
#include <stdlib.h>

/* The key of a new directory's first name, to wait for (reachable_wait();
 * moved_note() files removals under the bare inode number, dotdot_note() a
 * moved directory's new ".." under DOTDOT(), removal_note() under
 * REMOVALS_KEY()). */
#define FIRST_NAME(ino) ((1ull << 32) | (ino))
#define DOTDOT(ino) ((2ull << 32) | (ino))

/*
 * Make a new inode of the given mode and name it in dir.  Rule 1 in order:
 * the bitmap bit, then the initialised inode (with whatever init() made for
 * it: a directory's first block, a symlink's block), then the entry; for a
 * directory also the parent's raised link count before the entry.
 */
typedef int (*init_fn)(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in,
		       uint32_t dir, const void *arg, struct waits *iw);

static int make_node(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		     uint32_t mode, const struct sufs_cred *cred, init_fn init,
		     const void *arg, uint32_t *out)
{
	struct sufs_inode din, in;
	struct waits iw = { 0 }, ew = { 0 }, dw = { 0 };
	uint32_t ino, other;
	upd_id bit, id;
	int is_dir = S_ISDIR(mode), err;

	err = check_name(name, len);
	if (!err && is_dot(name, len))
		err = -EEXIST;
	if (!err)
		err = load_parent(fs, dir, &din);
	if (err)
		return err;
	err = dir_lookup(fs, dir, &din, name, len, &other);
	if (err != -ENOENT)
		return err ? err : -EEXIST;
	if (is_dir && din.links >= SUFS_LINK_MAX)
		return -EMLINK;
	err = alloc_inode(fs, dir, is_dir, &ino, &bit);
	if (err)
		return err;
	waits_add(&iw, bit);
	memset(&in, 0, sizeof(in));
	in.mode = (uint16_t)mode;
	in.links = is_dir ? 2 : 1;
	in.uid = cred ? cred->uid : 0;
	in.gid = cred ? cred->gid : 0;
	in.generation = fs->next_generation++;
	set_now(fs, &in, 1, 1, 1);
	in.crtime = in.ctime;
	in.crtime_ns = in.ctime_ns;
	err = init ? init(fs, ino, &in, dir, arg, &iw) : 0;
	if (!err)
		err = inode_store(fs, ino, &in, UPD_INODEDEP, &iw, &id);
	if (err) {
		free_inode(fs, ino, is_dir); /* nothing on disk can point to it yet */
		return err;
	}
	if (fs->broken_rule != 1)
		waits_add(&ew, id);
	if (is_dir) {
		din.links++; /* the child's ".." */
		err = inode_store(fs, dir, &din, UPD_INODEDEP, NULL, &id);
		waits_add(&ew, id);
	}
	if (!err)
		err = dir_add(fs, dir, &din, name, len, ino, sufs_ftype_of_mode(mode), &ew, &dw,
			      &id);
	if (err) {
		/* no name reaches the new inode: give it back */
		if (is_dir) {
			din.links--;
			inode_store(fs, dir, &din, UPD_INODEDEP, NULL, NULL);
		}
		inode_free(fs, ino, &in, NULL);
		return err;
	}
	/* a rename into the new directory waits for this name (reachable_wait) */
	if (is_dir)
		err = deps_note(fs, FIRST_NAME(ino), id);
	if (!err)
		err = touch_dir(fs, dir, &din, &dw);
	if (!err)
		*out = ino;
	return err;
}

static int perm_only(uint32_t mode, uint32_t type, uint32_t *out)
{
	if ((mode & S_IFMT) && (mode & S_IFMT) != type)
		return -EINVAL;
	*out = type | (mode & 07777);
	return 0;
}

int sufs_create(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
		const struct sufs_cred *cred, uint32_t *ino)
{
	int err = perm_only(mode, S_IFREG, &mode);
	if (!err)
		err = make_node(fs, dir, name, len, mode, cred, NULL, NULL, ino);
	return fs_op_end(fs, err);
}

struct rdev {
	uint32_t major, minor;
};

static int init_node(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
		     const void *arg, struct waits *iw)
{
	const struct rdev *r = arg;
	(void)fs; (void)ino; (void)dir; (void)iw;
	if (S_ISCHR(in->mode) || S_ISBLK(in->mode)) {
		in->rdev_major = r->major;
		in->rdev_minor = r->minor;
	}
	return 0;
}

int sufs_mknod(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       uint32_t major, uint32_t minor, const struct sufs_cred *cred, uint32_t *ino)
{
	struct rdev r = { major, minor };

	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		return -EINVAL;
	}
	return fs_op_end(fs, make_node(fs, dir, name, len, mode & (S_IFMT | 07777), cred,
				       init_node, &r, ino));
}

static int init_dir(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
		    const void *arg, struct waits *iw)
{
	(void)arg;
	return dir_init(fs, ino, in, dir, iw);
}

int sufs_mkdir(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       const struct sufs_cred *cred, uint32_t *ino)
{
	int err = perm_only(mode, S_IFDIR, &mode);
	if (!err)
		err = make_node(fs, dir, name, len, mode, cred, init_dir, NULL, ino);
	return fs_op_end(fs, err);
}

struct target {
	const char *s;
	size_t len;
};

/* A symlink's target: in the inode when short, else in one data block that
 * the pointer to it waits for. */
static int init_symlink(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
			const void *arg, struct waits *iw)
{
	const struct target *t = arg;
	struct waits pw = { 0 };
	uint64_t pblk;
	struct buf *b;
	int err;

	(void)dir;
	in->size = t->len;
	if (t->len <= SUFS_FAST_SYMLINK_MAX) {
		fast_target_set(in, t->s, t->len);
		return 0;
	}
	err = block_new(fs, inode_goal(fs, ino), BUF_DATA, UPD_DATA, &pblk, &b, &pw);
	if (err)
		return err;
	memcpy(b->data, t->s, t->len);
	buf_put(fs, b);
	return bmap_set(fs, in, 0, pblk, pblk, &pw, iw, NULL);
}

int sufs_symlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		 const char *target, const struct sufs_cred *cred, uint32_t *ino)
{
	struct target t = { target, target ? strlen(target) : 0 };

	if (t.len == 0)
		return -ENOENT;
	if (t.len >= SUFS_PATH_MAX || t.len > fs->bsize)
		return -ENAMETOOLONG;
	return fs_op_end(fs, make_node(fs, dir, name, len, S_IFLNK | 0777, cred, init_symlink,
				       &t, ino));
}

static int do_link(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name, size_t len)
{
	struct sufs_inode din, in;
	struct waits ew = { 0 }, dw = { 0 };
	uint32_t other;
	upd_id id;
	int err = check_name(name, len);

	if (!err && is_dot(name, len))
		err = -EEXIST;
	if (!err)
		err = load_parent(fs, dir, &din);
	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if (S_ISDIR(in.mode))
		return -EPERM;
	if (in.links == 0)
		return -ENOENT; /* unlinked, held open: gone for names */
	if (in.links >= SUFS_LINK_MAX)
		return -EMLINK;
	err = dir_lookup(fs, dir, &din, name, len, &other);
	if (err != -ENOENT)
		return err ? err : -EEXIST;
	/* rule 1: the link count goes up before the new name exists */
	in.links++;
	set_now(fs, &in, 0, 0, 1);
	err = inode_store(fs, ino, &in, UPD_INODEDEP, NULL, &id);
	if (err)
		return err;
	waits_add(&ew, id);
	err = dir_add(fs, dir, &din, name, len, ino, sufs_ftype_of_mode(in.mode), &ew, &dw, NULL);
	if (err) {
		in.links--;
		inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
		return err;
	}
	return touch_dir(fs, dir, &din, &dw);
}

int sufs_link(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name, size_t len)
{
	return fs_op_end(fs, do_link(fs, ino, dir, name, len));
}

/* ---- removing names ------------------------------------------------------------ */

/*
 * Drop one link of ino once removal (the update that took a name away) is
 * on disk (rule 3).  A directory, or a file at its last link, is freed.
 */
int drop_link(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, upd_id removal)
{
	struct waits w = { 0 };

	waits_add(&w, removal);
	/* a file still held open keeps its inode and blocks, with no link,
	 * until sufs_release() (a crash leaves it as a leak) */
	if (S_ISDIR(in->mode) || (in->links <= 1 && !hold_count(fs, ino)))
		return inode_free(fs, ino, in, &w);
	in->links--;
	set_now(fs, in, 0, 0, 1);
	return inode_store(fs, ino, in, UPD_INODEDEP, &w, NULL);
}

/*
 * A directory that rename moved or renamed keeps its old name on disk
 * until its new name (and its "..") are there.  Until that removal is on
 * disk, a change that takes away one of its other names (rmdir, rename
 * over it) waits for it, and one that gives it a third (renaming it again,
 * in its parent or to another) writes it first (moved_settle()): so a
 * crash never leaves a directory named only where its ".." does not point,
 * nor with more than two names (fsck keeps the one ".." confirms, a leak
 * fix).  Its link count does not order these: it is a counter, whose
 * raises and lowers never wait for each other (inode_store()).  The engine keeps the removals, filed
 * under the directory's inode number (deps_note()); a wait for the newest
 * is enough: a move's removal is on disk before the next move is made.
 */
int moved_note(struct sufs_fs *fs, uint32_t ino, upd_id removal)
{
	return deps_note(fs, ino, removal);
}

/* Add id (if pending) to w, or, when w is full, to its array w->more
 * (waits_done() frees it). */
static int wait_or_keep(struct waits *w, upd_id id)
{
	upd_id *p;

	if (!id)
		return 0;
	if (w->n < DEPS_MAX_WAITS) {
		waits_add(w, id);
		return 0;
	}
	p = realloc(w->more, (w->nmore + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	w->more = p;
	w->more[w->nmore++] = id;
	return 0;
}

void waits_done(struct waits *w)
{
	free(w->more);
	w->more = NULL;
	w->nmore = 0;
}

/* Wait for the update filed under key | each directory from dir up to the
 * root (those that do not fit in w go to its array: a deep tree's, which
 * were once written at once, as fsync would). */
static int path_wait(struct sufs_fs *fs, uint32_t dir, uint64_t key, struct waits *w)
{
	struct sufs_inode din;
	unsigned depth;
	int err = 0;

	for (depth = 0; dir != SUFS_ROOT_INO && !err; depth++) {
		if (depth > fs->sb.inodes_count) {
			err = -EIO; /* a loop of "..": damage */
			break;
		}
		err = wait_or_keep(w, deps_noted(fs, key | dir));
		if (!err)
			err = inode_load(fs, dir, &din);
		if (!err)
			err = dir_lookup(fs, dir, &din, "..", 2, &dir);
	}
	return err;
}

/*
 * A directory made by mkdir is reachable only once its first name is on
 * disk, and so is everything named in it.  A name a rename adds there
 * must be reachable before the old one goes (rule 3), so the removal
 * waits for the first name of dir and of each directory above it that is
 * not yet on disk.  (A moved directory stays reachable by its old name
 * until its new one is on disk: only first names matter.)
 */
int reachable_wait(struct sufs_fs *fs, uint32_t dir, struct waits *w)
{
	return path_wait(fs, dir, FIRST_NAME(0), w);
}

/*
 * No loop of ".." on disk.  A directory moved under dir gets a ".." that
 * names dir only once the newest ".." change of dir and of each directory
 * above it is on disk: so when the new ".." is on disk, the ".." on disk
 * of each directory above it is the one it had at the move, or newer, and
 * a newer one waited in the same way.  Take the newest ".." of a loop on
 * disk: at its move, the way up from its new parent did not pass through
 * the directory moved (rename refuses that), and every ".." on that way
 * was on disk by then as it stood: the loop follows that way to the root,
 * which is no loop.  (Without this, a directory moved out of a tree and
 * the tree then moved under it could show on disk the old ".." of the one
 * and the new ".." of the other: a loop no name reaches.)
 */
int dotdot_note(struct sufs_fs *fs, uint32_t ino, upd_id dotdot)
{
	return deps_note(fs, DOTDOT(ino), dotdot);
}

int dotdots_wait(struct sufs_fs *fs, uint32_t dir, struct waits *w)
{
	return path_wait(fs, dir, DOTDOT(0), w);
}

void moved_wait(struct sufs_fs *fs, uint32_t ino, struct waits *w)
{
	waits_add(w, deps_noted(fs, ino));
}

/*
 * Renaming a directory again while its last rename's old name is still
 * on its way: that removal goes to disk now, as fsync would, and the new
 * rename waits for nothing of the old.  Waiting for it instead chained the
 * moves of one directory, each one an epoch or more of the next sync: a
 * sync that grew with the moves pending.  The write is bounded (the
 * removal waits for one rename's names, its "..", the first names and
 * ".." above its new parent), and comes only for a second rename of one
 * directory before the write-back reached the first.
 */
int moved_settle(struct sufs_fs *fs, uint32_t ino)
{
	upd_id id = deps_noted(fs, ino), *ids;

	if (!id)
		return 0;
	ids = malloc(sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	ids[0] = id;
	fs->stats.moves_settled++;
	return deps_flush_set(fs, ids, 1); /* frees ids */
}

/*
 * The names rename takes out of a directory: on disk, one of them may be
 * the file's only name until its new one is there (the removal waits for
 * it).  So the directory itself goes on disk (rmdir, or a rename over it)
 * only once those removals are on disk: its removal waits for every one
 * still pending (removals_wait(), handed to the engine as an array, as
 * many as there are).  The removals do not wait for each other: each once
 * waited for the one before from its block, so that the newest meant all
 * of that block's, and a directory moved again wrote with its last
 * removal (moved_settle()) every rename out of the block since its last
 * write.  Filed in the engine under a key of their own beside the moved
 * directories' (deps_note()).
 */
#define REMOVALS_KEY(dir) ((uint64_t)2 << 62 | (dir))

int removal_note(struct sufs_fs *fs, uint32_t dir, upd_id removal)
{
	return deps_note(fs, REMOVALS_KEY(dir), removal);
}

int removals_wait(struct sufs_fs *fs, uint32_t dir, struct waits *w)
{
	upd_id *ids;
	size_t n;
	int err = deps_noted_all(fs, REMOVALS_KEY(dir), &ids, &n);

	assert(!w->more); /* the callers hand a set with no array yet */
	if (!err) {
		w->more = ids;
		w->nmore = n;
	}
	return err;
}

/* The newest pending update of bytes [lo, hi) of ino's inode, or 0. */
static upd_id inode_last_over(struct sufs_fs *fs, uint32_t ino, uint32_t lo, uint32_t hi)
{
	struct sufs_group_layout l;
	uint32_t g = (ino - 1) / fs->sb.inodes_per_group, idx, off;
	struct buf *b;

	idx = (ino - 1) % fs->sb.inodes_per_group;
	sufs_group_layout(&fs->sb, g, &l);
	b = cache_lookup(fs, l.inode_table + idx / fs->inodes_per_block);
	off = (idx % fs->inodes_per_block) * SUFS_INODE_SIZE;
	return b ? deps_last_over(b, off + lo, hi - lo) : 0;
}

/* The update that frees ino's inode bytes, if pending (to wait for it). */
upd_id inode_last_update(struct sufs_fs *fs, uint32_t ino)
{
	return inode_last_over(fs, ino, 0, SUFS_INODE_SIZE);
}

/*
 * The newest pending change of what maps a directory's blocks: its size
 * and its block pointers (a directory grown by a block), not its link
 * count or its times.  A wait for the whole inode tied a rename to the
 * removal that a lowered link count of its directory waits for, and that
 * removal to the next: a chain through the directories' inodes.
 */
upd_id dir_map_update(struct sufs_fs *fs, uint32_t dir)
{
	upd_id size = inode_last_over(fs, dir, IN_SIZE, IN_BLOCKS),
	       ptrs = inode_last_over(fs, dir, IN_GENERATION, IN_XATTR_BLOCK);

	return size > ptrs ? size : ptrs; /* the newer: ids grow */
}

static int do_unlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, int rmdir)
{
	struct sufs_inode din, in;
	uint32_t ino, old;
	upd_id removal;
	struct waits pw = { 0 }, rw = { 0 };
	int err = check_name(name, len);

	if (!err && is_dot(name, len))
		err = !rmdir ? -EISDIR : len == 2 ? -ENOTEMPTY
			: is_root_dot(dir, name, len) ? -EBUSY : -EINVAL;
	if (!err)
		err = load_parent(fs, dir, &din);
	if (!err)
		err = dir_lookup(fs, dir, &din, name, len, &ino);
	if (!err && !inode_valid_ino(fs, ino))
		err = -SUFS_ECORRUPT;
	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if (rmdir) {
		if (!S_ISDIR(in.mode))
			return -ENOTDIR;
		if (ino == SUFS_ROOT_INO)
			return -EBUSY;
		err = dir_is_empty(fs, ino, &in);
		if (err <= 0)
			return err < 0 ? err : -ENOTEMPTY;
	} else if (S_ISDIR(in.mode)) {
		return -EISDIR;
	}
	/* the name ".." confirms goes after any other a rename left, and
	 * after the names renames took out of it (removals_wait()) */
	if (rmdir) {
		moved_wait(fs, ino, &rw);
		err = removals_wait(fs, ino, &rw);
		if (err)
			return err;
	}
	/* rule 3: the name goes first; the link count follows it to disk */
	err = dir_set(fs, dir, &din, name, len, 0, 0, UPD_DIRREM, &rw, &old, &removal);
	waits_done(&rw);
	if (!err)
		err = drop_link(fs, ino, &in, removal);
	if (!err && rmdir) {
		/* the parent loses the child's ".." once the child's name is gone
		 * on disk: a directory no name reaches has a ".." that counts for
		 * nothing (fsck moves it to /lost+found, a leak).  Waiting for the
		 * child's inode instead would chain a tree's removal into one
		 * epoch per level. */
		waits_add(&pw, removal);
		din.links--;
		err = inode_store(fs, dir, &din, UPD_INODEDEP, &pw, NULL);
	}
	if (!err)
		err = touch_dir(fs, dir, &din, NULL);
	return err;
}

int sufs_unlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len)
{
	return fs_op_end(fs, do_unlink(fs, dir, name, len, 0));
}

int sufs_rmdir(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len)
{
	return fs_op_end(fs, do_unlink(fs, dir, name, len, 1));
}
