/*
 * pass3.c - pass 3: connectivity.
 *
 * Every directory must reach the root through the names pass 2 found.
 * From each directory not known to, the climb follows the names upward
 * until the root, a directory no name reaches (the top of a detached
 * chain), or a directory met before on the same climb (a loop).  A
 * detached top is cleared when empty, else connected to /lost+found (made
 * with the library's mkdir when missing); a loop is cut at its way in.
 * Then each directory's '..' is made to name its parent, and counted as
 * one of the parent's names.  Pass 4 connects unnamed files with the same
 * reconnect().
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

/* Point the '..' of directory d at parent. */
static int set_dotdot(struct chk *c, struct dirinfo *d, uint32_t parent)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode in;
	uint64_t pblk;
	uint32_t r0;
	struct buf *b;
	int rc = inode_load(fs, d->ino, &in);

	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	rc = bmap_get(fs, &in, 0, &pblk);
	if (rc || !pblk)
		return rc ? rc : -SUFS_ECORRUPT;
	rc = buf_get(fs, pblk, BUF_DIR, &b);
	if (rc)
		return rc;
	r0 = get16(b->data + DE_RECLEN);
	if (r0 < 16 || r0 + 16 > fs->bsize - SUFS_DIR_TAIL_SIZE || !is_name(b->data + r0, "..")) {
		buf_put(fs, b);
		return -SUFS_ECORRUPT;
	}
	buf_update(fs, b, r0, 8, UPD_DIRREM, NULL);
	put32(b->data + r0 + DE_INO, parent);
	b->data[r0 + DE_FTYPE] = SUFS_FT_DIR;
	b->type = BUF_DIR;
	buf_put(fs, b);
	d->dotdot = parent;
	return 0;
}

static int add_links(struct chk *c, uint32_t ino, int delta)
{
	struct sufs_inode in;
	int rc = inode_load(c->fs, ino, &in);

	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	in.links = (uint32_t)((int64_t)in.links + delta);
	return inode_store(c->fs, ino, &in, UPD_INODEDEP, NULL, NULL);
}

/*
 * The library's mkdir in the root.  It refuses a parent whose link count
 * is at the limit; but the root's count is judged only in pass 4, against
 * the names counted, and a damaged one must not stop /lost+found being
 * made before then.  Such a count is lowered for the mkdir, then put back
 * (with the new '..') for pass 4 to report and fix.
 */
static int mkdir_in_root(struct chk *c, const char *name, uint32_t *ino)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode root;
	uint32_t links;
	int rc = inode_load(fs, SUFS_ROOT_INO, &root), mkrc;

	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	links = root.links;
	if (links < SUFS_LINK_MAX)
		return sufs_mkdir(fs, SUFS_ROOT_INO, name, strlen(name), 0700, NULL, ino);
	root.links = SUFS_LINK_MAX - 1;
	rc = inode_store(fs, SUFS_ROOT_INO, &root, UPD_INODEDEP, NULL, NULL);
	if (rc)
		return rc;
	mkrc = sufs_mkdir(fs, SUFS_ROOT_INO, name, strlen(name), 0700, NULL, ino);
	rc = inode_load(fs, SUFS_ROOT_INO, &root);
	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	root.links = mkrc ? links : links < UINT32_MAX ? links + 1 : links;
	rc = inode_store(fs, SUFS_ROOT_INO, &root, UPD_INODEDEP, NULL, NULL);
	return mkrc ? mkrc : rc;
}

/* /lost+found: found, or made with the library's mkdir. */
static int lost_found(struct chk *c, uint32_t *out)
{
	static const char name[] = "lost+found";
	struct sufs_fs *fs = c->fs;
	struct sufs_inode root;
	struct dirinfo *d;
	uint32_t ino;
	int rc;

	if (c->lost_found) {
		*out = c->lost_found;
		return 0;
	}
	rc = prepare_alloc(c);
	if (rc)
		return rc;
	rc = inode_load(fs, SUFS_ROOT_INO, &root);
	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	rc = dir_lookup(fs, SUFS_ROOT_INO, &root, name, sizeof(name) - 1, &ino);
	if (rc == 0) {
		if (ino > c->ninodes || ino_ftype(c, ino) != SUFS_FT_DIR)
			return -ENOTDIR;
		c->lost_found = ino;
		*out = ino;
		return 0;
	}
	if (rc != -ENOENT)
		return rc;
	rc = mkdir_in_root(c, name, &ino);
	if (rc)
		return rc;
	ino_set_ftype(c, ino, SUFS_FT_DIR, 0);
	rc = dir_add_info(c, ino);
	if (rc)
		return rc;
	d = dir_find_info(c, ino);
	d->dotdot = d->parent = SUFS_ROOT_INO;
	d->mark = 1;
	count_link(c, ino); /* its '.' */
	count_link(c, ino); /* its name */
	if (c->dotdot_counted)
		count_link(c, SUFS_ROOT_INO);
	c->lost_found = ino;
	*out = ino;
	return claim_inode(c, ino);
}

/* Give an inode a name in /lost+found: "#INO". */
int reconnect(struct chk *c, uint32_t ino)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode lin;
	struct waits iw = { 0 };
	struct dirinfo *d;
	char name[16];
	uint32_t lf;
	int rc = lost_found(c, &lf);

	if (rc)
		return rc;
	rc = inode_load(fs, lf, &lin);
	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	snprintf(name, sizeof(name), "#%u", ino);
	rc = dir_add(fs, lf, &lin, name, strlen(name), ino, ino_ftype(c, ino), NULL, &iw, NULL);
	if (!rc)
		rc = inode_store(fs, lf, &lin, UPD_INODEDEP, NULL, NULL);
	if (!rc)
		rc = claim_inode(c, lf);
	if (rc)
		return rc;
	count_link(c, ino);
	if (ino_ftype(c, ino) == SUFS_FT_DIR) {
		d = dir_find_info(c, ino);
		d->parent = lf;
		rc = set_dotdot(c, d, lf);
		if (!rc)
			rc = add_links(c, lf, 1); /* the new '..' */
	}
	return rc;
}

/* Remove the entry of directory dir that names ino (a loop's way in). */
static int unlink_entry(struct chk *c, uint32_t dir, uint32_t ino)
{
	struct sufs_fs *fs = c->fs;
	uint32_t end = fs->bsize - SUFS_DIR_TAIL_SIZE, off, reclen;
	struct sufs_inode in;
	uint64_t n, lblk, pblk;
	struct buf *b;
	int rc = inode_load(fs, dir, &in);

	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	n = in.size / fs->bsize;
	for (lblk = 0; lblk < n; lblk++) {
		if (bmap_get(fs, &in, lblk, &pblk) || !pblk)
			continue;
		rc = buf_get(fs, pblk, BUF_DIR, &b);
		if (rc)
			return rc;
		for (off = lblk ? 0 : 32; off < end; off += reclen) {
			reclen = get16(b->data + off + DE_RECLEN);
			if (reclen < SUFS_DIRENT_HDR || reclen > end - off)
				break;
			if (get32(b->data + off + DE_INO) == ino) {
				buf_update(fs, b, off, 4, UPD_DIRREM, NULL);
				put32(b->data + off + DE_INO, 0);
				buf_put(fs, b);
				dirhash_drop(fs, dir);
				uncount_link(c, ino);
				return 0;
			}
		}
		buf_put(fs, b);
	}
	return -ENOENT;
}

/* Make inode 2 a new, empty root directory. */
static int make_root(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode in;
	uint64_t pblk;
	struct buf *b;
	int rc = chk_alloc_block(c, 0, &pblk);

	if (rc)
		return rc;
	rc = buf_get_new(fs, pblk, BUF_DIR, &b);
	if (rc)
		return rc;
	buf_update(fs, b, 0, fs->bsize, UPD_MKDIR, NULL);
	dir_fresh(b->data, fs->bsize, SUFS_ROOT_INO, SUFS_ROOT_INO, 1);
	buf_put(fs, b);
	memset(&in, 0, sizeof(in));
	in.mode = S_IFDIR | 0755;
	in.links = 2;
	in.size = fs->bsize;
	in.blocks = 1;
	in.block[0] = pblk;
	fs_now(fs, &in.ctime, &in.ctime_ns);
	in.atime = in.mtime = in.crtime = in.ctime;
	rc = inode_store(fs, SUFS_ROOT_INO, &in, UPD_INODEDEP, NULL, NULL);
	if (!rc)
		rc = bitmap_set(fs, SUFS_BITMAP_INODE, SUFS_ROOT_INO, 1, NULL);
	if (rc < 0)
		return rc;
	ino_set_ftype(c, SUFS_ROOT_INO, SUFS_FT_DIR, 0);
	rc = dir_add_info(c, SUFS_ROOT_INO);
	if (rc)
		return rc;
	dir_find_info(c, SUFS_ROOT_INO)->dotdot = SUFS_ROOT_INO; /* as dir_fresh made it */
	count_link(c, SUFS_ROOT_INO); /* '.' */
	return 0;
}

/* The top of a chain of directories that does not reach the root. */
static int detached(struct chk *c, struct dirinfo *top, int loop)
{
	struct sufs_inode in;
	struct pctx x = { .ino = top->ino, .ino2 = loop ? top->parent : top->dotdot };
	int rc;

	if (!loop && top->entries == 0) {
		if (!fix_problem(c, SUFS_PR_DIR_UNREF_EMPTY, &x))
			return 0;
		rc = inode_load(c->fs, top->ino, &in);
		if (rc && rc != -SUFS_ECHECKSUM)
			return rc;
		return clear_inode(c, top->ino, &in);
	}
	if (!fix_problem(c, loop ? SUFS_PR_DIR_LOOP : SUFS_PR_DIR_UNREF, &x))
		return 0;
	if (loop) {
		rc = unlink_entry(c, top->parent, top->ino);
		if (rc == -ENOENT)
			rc = 0;
		if (rc)
			return rc;
		top->parent = 0;
	}
	rc = reconnect(c, top->ino);
	if (rc == -ENOSPC || rc == -ENOTDIR || rc == -EAGAIN || rc == -SUFS_ECORRUPT) {
		fix_failed(c);
		rc = 0;
	}
	return rc;
}

/*
 * /lost+found naming something that is not a directory would stop every
 * reconnection: the name goes before any is needed (made anew when one
 * is), and what it named, if nothing else names it, is reconnected to the
 * new /lost+found in pass 4.
 */
static int lost_found_not_dir(struct chk *c)
{
	static const char name[] = "lost+found";
	struct sufs_fs *fs = c->fs;
	struct sufs_inode root;
	struct pctx x = { 0 };
	uint32_t ino, old;
	upd_id id;
	int rc = inode_load(fs, SUFS_ROOT_INO, &root);

	if (rc && rc != -SUFS_ECHECKSUM)
		return rc;
	/* (a damaged root left so by -n: what it holds is not looked at) */
	rc = dir_lookup(fs, SUFS_ROOT_INO, &root, name, sizeof(name) - 1, &ino);
	if (rc)
		return rc == -ENOMEM || rc == -EIO ? rc : 0;
	if (ino <= c->ninodes && ino_ftype(c, ino) == SUFS_FT_DIR)
		return 0;
	x.ino = ino;
	if (!fix_problem(c, SUFS_PR_LOST_FOUND_NOT_DIR, &x))
		return 0;
	rc = dir_set(fs, SUFS_ROOT_INO, &root, name, sizeof(name) - 1, 0, 0, UPD_DIRREM, NULL,
		     &old, &id);
	if (rc)
		return rc;
	if (ino <= c->ninodes)
		uncount_link(c, ino);
	return 0;
}

int pass3(struct chk *c)
{
	struct pctx x = { .ino = SUFS_ROOT_INO };
	struct dirinfo *d, *cur, *root;
	uint32_t stamp = 1;
	size_t i;
	int rc = 0, loop;

	if (ino_ftype(c, SUFS_ROOT_INO) != SUFS_FT_DIR) {
		if (!fix_problem(c, SUFS_PR_ROOT_MISSING, &x))
			return 0; /* nothing can be connected */
		rc = make_root(c);
		if (rc)
			return rc;
	}
	root = dir_find_info(c, SUFS_ROOT_INO);
	root->parent = SUFS_ROOT_INO;
	root->mark = 1;
	rc = lost_found_not_dir(c);
	for (i = 0; i < c->ndirs && !rc && !poll_stop(c); i++) {
		uint32_t start = c->dirs[i].ino, rest;
		if (c->dirs[i].mark || c->dirs[i].cleared)
			continue;
		/* climb until the root, the top, or a directory seen on this climb */
		stamp++;
		cur = &c->dirs[i];
		loop = 0;
		while (!cur->mark && !cur->cleared) {
			struct dirinfo *up;
			cur->mark = stamp;
			up = cur->parent ? dir_find_info(c, cur->parent) : NULL;
			if (!up)
				break;
			if (up->mark == stamp) {
				loop = 1;
				cur = up;
				break;
			}
			cur = up;
		}
		/* in a loop, the directories climbed after the top lead back to
		 * it by parents: where the loop went on from the top */
		rest = loop ? cur->parent : 0;
		if (cur->mark != 1 && !cur->cleared)
			rc = detached(c, cur, loop); /* may move c->dirs */
		/* everything climbed is dealt with now: the path to the top, and
		 * the rest of a loop (the top's parent is no longer in it) */
		for (cur = dir_find_info(c, start); cur && cur->mark == stamp;
		     cur = cur->parent ? dir_find_info(c, cur->parent) : NULL)
			cur->mark = 1;
		for (cur = rest ? dir_find_info(c, rest) : NULL; cur && cur->mark == stamp;
		     cur = cur->parent ? dir_find_info(c, cur->parent) : NULL)
			cur->mark = 1;
		pass_progress(c, 3, i + 1, c->ndirs);
	}
	/* '..' names the parent */
	for (i = 0; i < c->ndirs && !rc; i++) {
		d = &c->dirs[i];
		if (d->cleared || !d->parent || d->dotdot == d->parent)
			continue;
		x = (struct pctx){ .ino = d->ino, .ino2 = d->dotdot, .dir = d->parent };
		if (fix_problem(c, SUFS_PR_BAD_DOTDOT, &x)) {
			rc = set_dotdot(c, d, d->parent);
			if (rc == -SUFS_ECORRUPT) {
				fix_failed(c);
				rc = 0;
			}
		}
	}
	/* and counts as one of its names; not that of a directory no name
	 * reaches (left so: a repair clears it or moves it to /lost+found, and
	 * its parent's count must not wait for a '..' that goes) */
	for (i = 0; i < c->ndirs; i++) {
		d = &c->dirs[i];
		if (!d->cleared && d->parent && d->dotdot <= c->ninodes &&
		    ino_ftype(c, d->dotdot) == SUFS_FT_DIR)
			count_link(c, d->dotdot);
	}
	c->dotdot_counted = 1;
	return rc;
}
