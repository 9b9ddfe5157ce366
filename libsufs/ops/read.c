/*
 * read.c - the operations that only read: stat, lookup, readdir, read,
 * readlink, and path names.
 */
#include "config.h"
#include "ops_int.h"

#include <stdlib.h>

#define SYMLOOP_MAX 40

int sufs_stat(struct sufs_fs *fs, uint32_t ino, struct sufs_stat *st)
{
	struct sufs_inode in;
	int err = load_live(fs, ino, &in);

	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->ino = ino;
	st->mode = in.mode;
	st->links = in.links;
	st->uid = in.uid;
	st->gid = in.gid;
	st->size = in.size;
	st->blocks = in.blocks;
	st->atime = in.atime;
	st->mtime = in.mtime;
	st->ctime = in.ctime;
	st->crtime = in.crtime;
	st->atime_ns = in.atime_ns;
	st->mtime_ns = in.mtime_ns;
	st->ctime_ns = in.ctime_ns;
	st->crtime_ns = in.crtime_ns;
	st->rdev_major = in.rdev_major;
	st->rdev_minor = in.rdev_minor;
	st->generation = in.generation;
	return 0;
}

int sufs_lookup(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	struct sufs_inode din;
	int err = load_live(fs, dir, &din);

	if (err)
		return err;
	if (!S_ISDIR(din.mode))
		return -ENOTDIR;
	if (len > SUFS_NAME_MAX)
		return -ENAMETOOLONG;
	err = dir_lookup(fs, dir, &din, name, len, ino);
	if (!err && !inode_valid_ino(fs, *ino))
		return -SUFS_ECORRUPT;
	return err;
}

int sufs_readdir(struct sufs_fs *fs, uint32_t dir, sufs_dirent_fn fn, void *arg)
{
	struct sufs_inode din;
	int err = load_live(fs, dir, &din);

	if (err)
		return err;
	return dir_iterate(fs, dir, &din, fn, arg);
}

int sufs_read(struct sufs_fs *fs, uint32_t ino, uint64_t off, void *buf, size_t len,
	      size_t *done)
{
	struct sufs_inode in;
	uint8_t *out = buf;
	uint64_t pblk;
	struct buf *b;
	int err = load_live(fs, ino, &in);

	*done = 0;
	if (err)
		return err;
	if (!inode_has_blocks(&in))
		return -EINVAL;
	if (in.size > inode_max_blocks(fs) << fs->bshift)
		return -SUFS_ECORRUPT; /* no block map reaches that far */
	if (off >= in.size)
		return 0;
	if (len > in.size - off)
		len = (size_t)(in.size - off);
	while (len) {
		uint32_t boff = (uint32_t)(off & (fs->bsize - 1));
		size_t n = fs->bsize - boff < len ? fs->bsize - boff : len;

		err = bmap_get(fs, &in, off >> fs->bshift, &pblk);
		if (err)
			return err;
		if (!pblk) {
			memset(out, 0, n);
		} else {
			err = buf_get(fs, pblk, BUF_DATA, &b);
			if (err)
				return err;
			memcpy(out, b->data + boff, n);
			buf_put(fs, b);
		}
		out += n;
		off += n;
		len -= n;
		*done += n;
	}
	return 0;
}

int sufs_readlink(struct sufs_fs *fs, uint32_t ino, char *buf, size_t size, size_t *len)
{
	struct sufs_inode in;
	uint8_t fast[SUFS_FAST_SYMLINK_MAX];
	size_t n;
	int err = load_live(fs, ino, &in);

	if (err)
		return err;
	if (!S_ISLNK(in.mode))
		return -EINVAL;
	if (in.size == 0 || in.size >= SUFS_PATH_MAX || in.size > fs->bsize)
		return -SUFS_ECORRUPT;
	n = in.size < size ? (size_t)in.size : size;
	if (in.size <= SUFS_FAST_SYMLINK_MAX) {
		fast_target_get(&in, fast);
		memcpy(buf, fast, n);
		*len = n;
		return 0;
	}
	err = sufs_read(fs, ino, 0, buf, n, len);
	if (!err && *len != n)
		err = -SUFS_ECORRUPT;
	return err;
}

/* ---- path names ------------------------------------------------------------- */

/*
 * Walk path from cwd (or the root).  A symlink's target is spliced in
 * front of what remains of the path, in a buffer on the stack (no malloc:
 * every operation walks a path, and an 8 KiB malloc is not cheap).
 */
int sufs_namei(struct sufs_fs *fs, uint32_t cwd, const char *path, int follow, uint32_t *ino)
{
	char buf[2 * SUFS_PATH_MAX];
	const char *p = path, *next;
	uint32_t dir, cur;
	unsigned links = 0;
	size_t len;
	int err = 0;

	if (!path || !*path)
		return -ENOENT;
	if (strlen(path) >= SUFS_PATH_MAX)
		return -ENAMETOOLONG;
	cur = *p == '/' ? SUFS_ROOT_INO : cwd;
	for (;;) {
		struct sufs_inode in;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		next = strchr(p, '/');
		len = next ? (size_t)(next - p) : strlen(p);
		dir = cur;
		if (len == 1 && p[0] == '.') {
			err = load_live(fs, dir, &in);
			if (!err && !S_ISDIR(in.mode))
				err = -ENOTDIR;
		} else {
			err = sufs_lookup(fs, dir, p, len, &cur);
		}
		if (err)
			break;
		p += len;
		err = load_live(fs, cur, &in);
		if (err)
			break;
		if (S_ISLNK(in.mode) && (follow || strchr(p, '/'))) {
			char target[SUFS_PATH_MAX];
			size_t tlen, rest = strlen(p);

			if (++links > SYMLOOP_MAX) {
				err = -ELOOP;
				break;
			}
			err = sufs_readlink(fs, cur, target, sizeof(target) - 1, &tlen);
			if (err)
				break;
			if (tlen + rest + 1 >= 2 * SUFS_PATH_MAX) {
				err = -ENAMETOOLONG;
				break;
			}
			memmove(buf + tlen, p, rest + 1); /* p may be in buf */
			memcpy(buf, target, tlen);
			p = buf;
			cur = *p == '/' ? SUFS_ROOT_INO : dir;
		}
	}
	if (!err && path[strlen(path) - 1] == '/') {
		/* "name/" must be a directory */
		struct sufs_inode in;
		err = load_live(fs, cur, &in);
		if (!err && !S_ISDIR(in.mode))
			err = -ENOTDIR;
	}
	if (!err)
		*ino = cur;
	return err;
}

int sufs_namei_parent(struct sufs_fs *fs, uint32_t cwd, const char *path, uint32_t *dir,
		      const char **name, size_t *len)
{
	const char *end, *slash, *start;
	char *dpath;
	int err;

	if (!path || !*path)
		return -ENOENT;
	end = path + strlen(path);
	if (end - path >= SUFS_PATH_MAX)
		return -ENAMETOOLONG; /* as sufs_namei() would say of it later */
	while (end > path + 1 && end[-1] == '/')
		end--;
	for (slash = end; slash > path && slash[-1] != '/'; slash--)
		;
	start = slash;
	if (start == end) {
		/* "/" has no entry of its own: it is the root's "." */
		*dir = SUFS_ROOT_INO;
		*name = ".";
		*len = 1;
		return load_live(fs, SUFS_ROOT_INO, &(struct sufs_inode){ 0 });
	}
	if ((size_t)(end - start) > SUFS_NAME_MAX)
		return -ENAMETOOLONG;
	*name = start;
	*len = (size_t)(end - start);
	if (slash == path) {
		*dir = cwd;
		return load_live(fs, cwd, &(struct sufs_inode){ 0 });
	}
	dpath = strndup(path, (size_t)(slash - path));
	if (!dpath)
		return -ENOMEM;
	err = sufs_namei(fs, cwd, dpath, 1, dir);
	free(dpath);
	return err;
}
