/*
 * dir.c - reading directories: opendir, readdir, readdirplus, releasedir,
 * fsyncdir.
 *
 * The kernel reads a directory in pieces, each starting where the last
 * stopped, by an offset the file system chose.  The library lists a
 * directory only whole (sufs_readdir), so the listing is taken once, at
 * offset 0 (opendir, rewinddir), and served from memory by index: an
 * entry that stays in the directory meanwhile is returned exactly once
 * however the directory changes, which a position in its blocks would not
 * promise when an earlier name goes (rm -rf removes while it reads).
 * Names added or removed after the listing may or may not be seen, as
 * POSIX allows (readdir(3)).  readdirplus hands the kernel inodes, so each
 * of its names is looked up again first: a name removed since is left
 * out, one that names another inode now is given that one.
 */
#include "config.h"

#include "sufs-fuse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct dentry {
	uint32_t ino;
	uint32_t name;             /* offset in the listing's names */
	uint16_t len;
	uint8_t ftype;
};

struct listing {
	uint32_t dir;
	struct dentry *e;
	size_t n, cap;
	char *names;               /* each name NUL-terminated */
	size_t names_len, names_cap;
	int err;                   /* out of memory while listing */
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int add_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct listing *l = arg;
	struct dentry *e;

	if (grow((void **)&l->e, &l->cap, l->n + 1, sizeof(*l->e)) ||
	    grow((void **)&l->names, &l->names_cap, l->names_len + len + 1, 1))
		return l->err = -ENOMEM;
	e = &l->e[l->n++];
	e->ino = ino;
	e->name = (uint32_t)l->names_len;
	e->len = (uint16_t)len;
	e->ftype = (uint8_t)ftype;
	memcpy(l->names + l->names_len, name, len);
	l->names[l->names_len + len] = 0;
	l->names_len += len + 1;
	return 0;
}

void op_opendir(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct listing *l = calloc(1, sizeof(*l));

	if (!l) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	l->dir = ino_of(node);
	fi->fh = (uintptr_t)l;
	if (fuse_reply_open(req, fi))
		free(l);
}

void op_releasedir(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct listing *l = (struct listing *)(uintptr_t)fi->fh;

	(void)node;
	free(l->e);
	free(l->names);
	free(l);
	fuse_reply_err(req, 0);
}

/* At offset 0, the listing is taken (again); under the lock.  0 or an
 * errno. */
static int listing_at(struct mount *m, struct listing *l, off_t off)
{
	int rc;

	if (off != 0)
		return 0;
	l->n = 0;
	l->names_len = 0;
	l->err = 0;
	rc = sufs_readdir(m->fs, l->dir, add_fn, l);
	if (l->err)
		rc = l->err;
	return fuse_errno(m, rc, "listing", l->dir);
}

/* The type bits of a directory entry's file type. */
static mode_t type_of(unsigned ftype)
{
	static const mode_t types[SUFS_FT_MAX] = {
		[SUFS_FT_REG] = S_IFREG, [SUFS_FT_DIR] = S_IFDIR, [SUFS_FT_CHR] = S_IFCHR,
		[SUFS_FT_BLK] = S_IFBLK, [SUFS_FT_FIFO] = S_IFIFO, [SUFS_FT_SOCK] = S_IFSOCK,
		[SUFS_FT_LNK] = S_IFLNK,
	};
	return ftype < SUFS_FT_MAX ? types[ftype] : 0;
}

void op_readdir(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	struct listing *l = (struct listing *)(uintptr_t)fi->fh;
	struct stat st;
	size_t used = 0, i, n;
	char *buf;
	int err;

	(void)node;
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	sufs_lock(m->fs);
	err = listing_at(m, l, off);
	sufs_unlock(m->fs);
	for (i = (size_t)off; !err && i < l->n; i++) {
		memset(&st, 0, sizeof(st));
		st.st_ino = l->e[i].ino;
		st.st_mode = type_of(l->e[i].ftype);
		n = fuse_add_direntry(req, buf + used, size - used, l->names + l->e[i].name, &st,
				      (off_t)i + 1);
		if (n > size - used)
			break;
		used += n;
	}
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, used);
	free(buf);
}

static int is_dot(const struct listing *l, const struct dentry *e)
{
	const char *name = l->names + e->name;

	return name[0] == '.' && (e->len == 1 || (e->len == 2 && name[1] == '.'));
}

/*
 * The entry for readdirplus: with its attributes, and a reference for the
 * kernel (*counted), for a name that still names an inode; without (the
 * kernel makes nothing of it) for "." and "..".  ENOENT: the name went
 * since the listing.  Under the lock.
 */
static int plus_entry(struct mount *m, struct listing *l, struct dentry *d,
		      struct fuse_entry_param *e, int *counted)
{
	uint32_t ino;
	int rc;

	*counted = 0;
	if (is_dot(l, d)) {
		memset(e, 0, sizeof(*e));
		e->attr.st_ino = d->ino;
		e->attr.st_mode = S_IFDIR;
		return 0;
	}
	rc = sufs_lookup(m->fs, l->dir, l->names + d->name, d->len, &ino);
	if (rc)
		return rc == -ENOENT ? ENOENT : fuse_errno(m, rc, "listing", l->dir);
	d->ino = ino;
	rc = entry_of(m, l->dir, ino, e);
	*counted = !rc;
	return rc;
}

void op_readdirplus(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	struct listing *l = (struct listing *)(uintptr_t)fi->fh;
	struct fuse_entry_param e;
	uint32_t *refs;
	size_t used = 0, nrefs = 0, i, n;
	char *buf;
	int err, counted;

	(void)node;
	buf = malloc(size);
	refs = malloc((size / 32 + 1) * sizeof(*refs)); /* an entry takes more than 32 bytes */
	if (!buf || !refs) {
		free(buf);
		free(refs);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	sufs_lock(m->fs);
	err = listing_at(m, l, off);
	for (i = (size_t)off; !err && i < l->n; i++) {
		err = plus_entry(m, l, &l->e[i], &e, &counted);
		if (err == ENOENT) {
			err = 0;
			continue;
		}
		if (err)
			break;
		n = fuse_add_direntry_plus(req, buf + used, size - used, l->names + l->e[i].name,
					   &e, (off_t)i + 1);
		if (n > size - used) {
			/* no room: the kernel asks for it next time */
			if (counted)
				nodes_forget(&m->nodes, m->fs, l->e[i].ino, 1);
			break;
		}
		used += n;
		if (counted)
			refs[nrefs++] = l->e[i].ino;
	}
	if (err && used)
		err = 0; /* what fitted goes; the error comes with the next piece */
	sufs_unlock(m->fs);
	if (err) {
		fuse_reply_err(req, err);
	} else if (fuse_reply_buf(req, buf, used)) {
		sufs_lock(m->fs);
		while (nrefs)
			nodes_forget(&m->nodes, m->fs, refs[--nrefs], 1);
		sufs_unlock(m->fs);
	}
	free(buf);
	free(refs);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t node, int datasync, struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	uint32_t ino = ino_of(node);
	int rc;

	(void)datasync;
	(void)fi;
	sufs_lock(m->fs);
	rc = sync_inode(m, ino); /* io.c */
	sufs_unlock(m->fs);
	fuse_reply_err(req, fuse_errno(m, rc, "syncing", ino));
}
