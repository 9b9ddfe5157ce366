/*
 * fsync.c - fsync: make a file, its inode and the names that reach it
 * from the root durable, writing only what carries part of that.
 */
#include "config.h"
#include "ops_int.h"

#include <stdlib.h>

struct idlist {
	upd_id *id;
	size_t n, cap;
};

static int idlist_add(struct idlist *l, upd_id id)
{
	if (l->n == l->cap) {
		size_t cap = l->cap * 2 + 64;
		upd_id *p = realloc(l->id, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->id = p;
		l->cap = cap;
	}
	l->id[l->n++] = id;
	return 0;
}

/* Add id unless it is there already (a short list: directories up a path). */
static int idlist_add_new(struct idlist *l, upd_id id)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->id[i] == id)
			return 0;
	return idlist_add(l, id);
}

static int collect_id(void *arg, struct buf *b, uint32_t off, uint32_t len, upd_id id)
{
	(void)b; (void)off; (void)len;
	return idlist_add(arg, id);
}

/* The pending updates of one cached block, or of a byte range of it. */
static int add_block(struct sufs_fs *fs, uint64_t blk, uint32_t off, uint32_t len,
		     struct idlist *l)
{
	struct buf *b = cache_lookup(fs, blk);

	return b ? deps_collect(fs, b, off, len, 0, collect_id, l) : 0;
}

static int fsync_block_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			  int level, int bad, void *arg)
{
	(void)ino; (void)lblk; (void)level;
	return bad ? 0 : add_block(fs, pblk, 0, fs->bsize, arg);
}

static int add_inode(struct sufs_fs *fs, uint32_t ino, struct idlist *l)
{
	struct sufs_group_layout lay;
	uint32_t g = (ino - 1) / fs->sb.inodes_per_group, idx = (ino - 1) % fs->sb.inodes_per_group;

	sufs_group_layout(&fs->sb, g, &lay);
	return add_block(fs, lay.inode_table + idx / fs->inodes_per_block,
			 (idx % fs->inodes_per_block) * SUFS_INODE_SIZE, SUFS_INODE_SIZE, l);
}

/* What add_names() looks for, and where it puts what it finds. */
struct names_of {
	uint32_t ino, bsize;
	struct idlist *l, *dirs;
};

/* A pending new entry, or a new directory's first block: each entry in its
 * range that names the inode (an inode number lies at an 8-byte boundary)
 * counts, but "." and "..", which do not make it reachable from the root. */
static int name_fn(void *arg, struct buf *b, uint32_t off, uint32_t len, upd_id id)
{
	struct names_of *w = arg;
	uint32_t o;
	int err = 0;

	if (b->type != BUF_DIR || len < 4)
		return 0;
	for (o = off & ~7u; o + 4 <= off + len && !err; o += 8) {
		const uint8_t *de = b->data + o;

		if (o < off || get32(de + DE_INO) != w->ino)
			continue;
		if (o + SUFS_DIRENT_HDR + 2 <= w->bsize && de[DE_NAME] == '.' &&
		    (de[DE_NAMELEN] == 1 || (de[DE_NAMELEN] == 2 && de[DE_NAME + 1] == '.')))
			continue;
		err = idlist_add(w->l, id);
		if (!err && b->owner && b->owner != w->ino)
			err = idlist_add_new(w->dirs, b->owner);
	}
	return err;
}

/*
 * Pending entries that name ino: their updates, and the directories that
 * hold them (to walk up to the root).
 */
static int add_names(struct sufs_fs *fs, uint32_t ino, struct idlist *l, struct idlist *dirs)
{
	struct names_of w = { ino, fs->bsize, l, dirs };

	return deps_collect(fs, NULL, 0, 0, DEPS_KIND(UPD_DIRADD) | DEPS_KIND(UPD_MKDIR),
			    name_fn, &w);
}

/* The directory that dir's ".." names, to walk up to the root, and the
 * pending change of that ".." (the name on disk that ".." confirms is the
 * one fsck keeps). */
static int add_parent(struct sufs_fs *fs, uint32_t dir, struct idlist *l, struct idlist *dirs)
{
	struct sufs_inode din;
	uint32_t up;
	upd_id id = 0;
	int err;

	if (dir == SUFS_ROOT_INO)
		return 0;
	err = load_live(fs, dir, &din);
	if (!err && (!S_ISDIR(din.mode) || din.links == 0))
		return 0; /* a stale hint: the number went to something else */
	if (!err)
		err = dir_lookup(fs, dir, &din, "..", 2, &up);
	if (!err)
		err = dir_entry_pending(fs, dir, &din, "..", 2, &id, NULL);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (id && (err = idlist_add(l, id)) != 0)
		return err;
	return idlist_add_new(dirs, up);
}

/* The directory a file was last named in, if it still is a directory. */
static int add_hint(struct sufs_fs *fs, uint32_t dir, struct idlist *dirs)
{
	struct sufs_inode din;

	if (!inode_valid_ino(fs, dir) || load_live(fs, dir, &din) != 0 ||
	    !S_ISDIR(din.mode) || din.links == 0)
		return 0;
	return idlist_add_new(dirs, dir);
}

static int do_fsync(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	struct idlist l = { 0 }, dirs = { 0 };
	size_t i;
	int err = load_live(fs, ino, &in);

	if (err || !(fs->flags & SUFS_OPEN_RDWR))
		return err;
	if (fs->mode == SUFS_MODE_ASYNC)
		return sufs_sync(fs); /* no ordering to follow: everything */
	err = inode_walk(fs, ino, &in, fsync_block_fn, &l);
	if (!err && in.xattr_block && block_in_range(fs, in.xattr_block))
		err = add_block(fs, in.xattr_block, 0, fs->bsize, &l); /* changed in place */
	if (!err)
		err = add_inode(fs, ino, &l);
	if (!err)
		err = add_names(fs, ino, &l, &dirs);
	if (!err && S_ISDIR(in.mode))
		err = add_parent(fs, ino, &l, &dirs);
	else if (!err && parent_hint(fs, ino))
		/* its name may be on disk in a directory whose own is not (the
		 * hint may be stale: add_parent() walks up only from a directory) */
		err = add_hint(fs, parent_hint(fs, ino), &dirs);
	/* the directories on the way up to the root: their inodes and their
	 * own names, pending or not (a name on disk may sit in a directory
	 * whose own name is still on its way) */
	for (i = 0; i < dirs.n && !err && i < 4096; i++) {
		err = add_inode(fs, (uint32_t)dirs.id[i], &l);
		if (!err)
			err = add_names(fs, (uint32_t)dirs.id[i], &l, &dirs);
		if (!err)
			err = add_parent(fs, (uint32_t)dirs.id[i], &l, &dirs);
	}
	free(dirs.id);
	if (err) {
		free(l.id);
		return err;
	}
	if (!l.n) {
		free(l.id);
		return 0;
	}
	return deps_flush_set(fs, l.id, l.n);
}

int sufs_fsync(struct sufs_fs *fs, uint32_t ino)
{
	return do_fsync(fs, ino);
}
