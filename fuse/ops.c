/*
 * ops.c - the file system's names and attributes, as the kernel asks for
 * them: lookup and forget, getattr and setattr, readlink, the calls that
 * make and remove names, statfs; and what io.c and dir.c share.
 *
 * Every handler has the same shape: take the lock, make the library
 * calls, count the references the reply hands the kernel, drop the lock,
 * reply.  Holding the lock across the calls of one request is what makes
 * each request atomic to every other (a create and the stat of what it
 * made, a lookup and the hold on what it found).  The kernel checks
 * permissions itself (default_permissions, always on, with the ACLs
 * where the image has them), so a handler only does what it is asked.
 */
#include "config.h"

#include "sufs-fuse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>

/* ---- what the handlers share ------------------------------------------------------ */

int fuse_errno(struct mount *m, int rc, const char *what, uint32_t ino)
{
	if (rc >= 0)
		return 0;
	if (-rc < SUFS_EBASE && rc != -EIO)
		return -rc;
	/* damage, or the image failing: worth a line in the log, since the
	 * program that gets the error cannot say where it came from */
	note(m, LOG_ERR, "%s: %s inode %u: %s", m->image, what, ino, sufs_strerror(rc));
	switch (-rc) {
	case SUFS_ECORRUPT:
		return EUCLEAN;  /* as ext4 reports a corrupted structure */
	case SUFS_ECHECKSUM:
		return EBADMSG;  /* and a bad checksum */
	default:
		return EIO;
	}
}

void attr_of(struct mount *m, const struct sufs_stat *s, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = s->ino;
	st->st_mode = s->mode;
	st->st_nlink = s->links;
	st->st_uid = s->uid;
	st->st_gid = s->gid;
	st->st_size = (off_t)s->size;
	st->st_blocks = (blkcnt_t)(s->blocks * (m->block_size / 512));
	st->st_blksize = m->block_size;
	st->st_rdev = makedev(s->rdev_major, s->rdev_minor);
	st->st_atim.tv_sec = s->atime;
	st->st_atim.tv_nsec = s->atime_ns;
	st->st_mtim.tv_sec = s->mtime;
	st->st_mtim.tv_nsec = s->mtime_ns;
	st->st_ctim.tv_sec = s->ctime;
	st->st_ctim.tv_nsec = s->ctime_ns;
}

/*
 * How long the kernel may keep a name or attributes: the daemon makes
 * every change itself, so as long as asked, but for /.snap and what is
 * in it, which snapshots made and deleted through the control channel
 * (ctl.c) change behind the kernel's back.
 */
static double cache_time(struct mount *m, uint32_t dir, uint32_t ino)
{
	uint32_t snapdir = atomic_load(&m->snapdir);

	return snapdir && (dir == snapdir || ino == snapdir) ? 0.0 : m->timeout;
}

int entry_of(struct mount *m, uint32_t dir, uint32_t ino, struct fuse_entry_param *e)
{
	struct sufs_stat s;
	int rc = sufs_stat(m->fs, ino, &s);

	if (!rc)
		rc = nodes_ref(&m->nodes, m->fs, ino);
	if (rc)
		return fuse_errno(m, rc, "looking up", ino);
	memset(e, 0, sizeof(*e));
	e->ino = node_of(ino);
	e->generation = s.generation;
	attr_of(m, &s, &e->attr);
	e->attr_timeout = e->entry_timeout = cache_time(m, dir, ino);
	return 0;
}

/* A reference the kernel did not take (the request was interrupted) is
 * given back. */
static void unref(struct mount *m, fuse_ino_t node)
{
	sufs_lock(m->fs);
	nodes_forget(&m->nodes, m->fs, ino_of(node), 1);
	sufs_unlock(m->fs);
}

void reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	struct mount *m = mount_of(req);

	if (fuse_reply_entry(req, e) && e->ino)
		unref(m, e->ino);
}

/* The owner of something new: the caller, but a directory with the
 * set-group-ID bit passes on its group, and to a new directory the bit
 * too (as Linux's own file systems do).  Under the lock. */
static int new_owner(struct mount *m, fuse_req_t req, uint32_t dir, mode_t *mode,
		     struct sufs_cred *cred)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct sufs_stat ds;
	int rc = sufs_stat(m->fs, dir, &ds);

	if (rc)
		return rc;
	cred->uid = ctx->uid;
	cred->gid = ctx->gid;
	if (ds.mode & S_ISGID) {
		cred->gid = ds.gid;
		if (S_ISDIR(*mode))
			*mode |= S_ISGID;
	}
	return 0;
}

/* ---- the session ------------------------------------------------------------------ */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct mount *m = userdata;

	/* POSIX ACLs, on an image with attributes: the kernel checks them
	 * and leaves the umask to the daemon (make()), which applies it
	 * only where no default ACL is inherited */
	if (m->acl && (conn->capable & FUSE_CAP_POSIX_ACL) &&
	    (conn->capable & FUSE_CAP_DONT_MASK))
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
	else
		m->acl = 0;
	/* the kernel clears set-user-ID and set-group-ID bits itself on
	 * write, truncate and chown (it sends the setattr), and truncates
	 * itself before an open with O_TRUNC (so that it does so then too) */
	conn->want &= ~(unsigned)(FUSE_CAP_HANDLE_KILLPRIV | FUSE_CAP_ATOMIC_O_TRUNC);
	/* fewer, larger writes: each is one call into the library */
	conn->max_write = 1u << 20;
	conn->max_readahead = 1u << 20;
}

/* ---- names ---------------------------------------------------------------------------- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mount *m = mount_of(req);
	struct fuse_entry_param e;
	uint32_t dir = ino_of(parent), ino;
	int is_snapdir = dir == SUFS_ROOT_INO && !strcmp(name, ".snap"), rc, err;

	sufs_lock(m->fs);
	rc = sufs_lookup(m->fs, dir, name, strlen(name), &ino);
	if (!rc && is_snapdir)
		atomic_store(&m->snapdir, ino);
	err = rc ? fuse_errno(m, rc, "looking up a name in", dir) : entry_of(m, dir, ino, &e);
	sufs_unlock(m->fs);
	if (err == ENOENT) {
		/* a name that is not there: the kernel may remember that too
		 * (not in /.snap, which snapshots change) */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = is_snapdir ? 0.0 : cache_time(m, dir, 0);
		fuse_reply_entry(req, &e);
		return;
	}
	if (err)
		fuse_reply_err(req, err);
	else
		reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t node, uint64_t nlookup)
{
	struct mount *m = mount_of(req);

	sufs_lock(m->fs);
	nodes_forget(&m->nodes, m->fs, ino_of(node), nlookup);
	sufs_unlock(m->fs);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct mount *m = mount_of(req);
	size_t i;

	sufs_lock(m->fs);
	for (i = 0; i < count; i++)
		nodes_forget(&m->nodes, m->fs, ino_of(forgets[i].ino), forgets[i].nlookup);
	sufs_unlock(m->fs);
	fuse_reply_none(req);
}

/* ---- attributes --------------------------------------------------------------------- */

/* Reply with ino's attributes, as they stand (under the lock: unlocks). */
static void reply_attr_unlock(fuse_req_t req, struct mount *m, uint32_t ino, const char *what)
{
	struct sufs_stat s;
	struct stat st;
	int rc = sufs_stat(m->fs, ino, &s), err = fuse_errno(m, rc, what, ino);

	sufs_unlock(m->fs);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	attr_of(m, &s, &st);
	fuse_reply_attr(req, &st, cache_time(m, 0, ino));
}

static void op_getattr(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);

	(void)fi;
	sufs_lock(m->fs);
	reply_attr_unlock(req, m, ino_of(node), "reading");
}

static void now(int64_t *sec, uint32_t *nsec)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	*sec = ts.tv_sec;
	*nsec = (uint32_t)ts.tv_nsec;
}

/* What the kernel asks to set, as the library's setattr takes it.  A time
 * left out (UTIME_OMIT) is not asked for; UTIME_NOW comes as *_NOW. */
static void setattr_of(const struct stat *attr, int to_set, struct sufs_setattr *sa)
{
	memset(sa, 0, sizeof(*sa));
	if (to_set & FUSE_SET_ATTR_MODE) {
		sa->mask |= SUFS_SET_MODE;
		sa->mode = attr->st_mode & 07777;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa->mask |= SUFS_SET_UID;
		sa->uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa->mask |= SUFS_SET_GID;
		sa->gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		sa->mask |= SUFS_SET_SIZE;
		sa->size = (uint64_t)attr->st_size;
	}
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW)) {
		sa->mask |= SUFS_SET_ATIME;
		if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
			now(&sa->atime, &sa->atime_ns);
		} else {
			sa->atime = attr->st_atim.tv_sec;
			sa->atime_ns = (uint32_t)attr->st_atim.tv_nsec;
		}
	}
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) {
		sa->mask |= SUFS_SET_MTIME;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
			now(&sa->mtime, &sa->mtime_ns);
		} else {
			sa->mtime = attr->st_mtim.tv_sec;
			sa->mtime_ns = (uint32_t)attr->st_mtim.tv_nsec;
		}
	}
	if (to_set & FUSE_SET_ATTR_CTIME) {
		sa->mask |= SUFS_SET_CTIME;
		sa->ctime = attr->st_ctim.tv_sec;
		sa->ctime_ns = (uint32_t)attr->st_ctim.tv_nsec;
	}
}

static void op_setattr(fuse_req_t req, fuse_ino_t node, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	struct sufs_setattr sa;
	uint32_t ino = ino_of(node);
	int rc, err;

	(void)fi;
	setattr_of(attr, to_set, &sa);
	sufs_lock(m->fs);
	rc = sufs_setattr(m->fs, ino, &sa);
	if (rc) {
		err = fuse_errno(m, rc, "changing the attributes of", ino);
		sufs_unlock(m->fs);
		fuse_reply_err(req, err);
		return;
	}
	reply_attr_unlock(req, m, ino, "reading");
}

static void op_readlink(fuse_req_t req, fuse_ino_t node)
{
	struct mount *m = mount_of(req);
	char target[SUFS_PATH_MAX + 1];
	size_t len;
	int rc, err;

	sufs_lock(m->fs);
	rc = sufs_readlink(m->fs, ino_of(node), target, SUFS_PATH_MAX, &len);
	err = fuse_errno(m, rc, "reading the symlink", ino_of(node));
	sufs_unlock(m->fs);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	target[len] = 0;
	fuse_reply_readlink(req, target);
}

/* ---- making names --------------------------------------------------------------------- */

/* What to make: one of the library's calls that make a name. */
enum make_kind { MAKE_NODE, MAKE_DIR, MAKE_SYMLINK, MAKE_FILE };

struct make {
	enum make_kind kind;
	const char *name;
	mode_t mode;
	dev_t rdev;                /* MAKE_NODE */
	const char *target;        /* MAKE_SYMLINK */
};

/* Make it and fill e (with the kernel's reference counted); under the lock. */
static int make(fuse_req_t req, fuse_ino_t parent, struct make *mk, struct fuse_entry_param *e)
{
	struct mount *m = mount_of(req);
	struct sufs_fs *fs = m->fs;
	struct sufs_cred cred;
	uint32_t dir = ino_of(parent), ino;
	size_t len = strlen(mk->name);
	mode_t asked;
	uint32_t cut;
	int rc = new_owner(m, req, dir, &mk->mode, &cred), acl = 0;

	if (rc)
		return fuse_errno(m, rc, "reading", dir);
	asked = mk->mode;
	if (m->acl && mk->kind != MAKE_SYMLINK) {
		/* the kernel left the umask to us: it goes where no default
		 * ACL comes instead */
		rc = sufs_acl_create_mode(fs, dir, (uint32_t)mk->mode, &cut, &acl);
		if (rc)
			return fuse_errno(m, rc, "reading the default ACL of", dir);
		if (!acl)
			mk->mode &= ~(fuse_req_ctx(req)->umask & 0777);
		else
			mk->mode = (mode_t)cut;
	}
	switch (mk->kind) {
	case MAKE_NODE:
		rc = sufs_mknod(fs, dir, mk->name, len, (uint32_t)mk->mode, major(mk->rdev),
				minor(mk->rdev), &cred, &ino);
		break;
	case MAKE_DIR:
		rc = sufs_mkdir(fs, dir, mk->name, len, (uint32_t)mk->mode & 07777, &cred, &ino);
		break;
	case MAKE_SYMLINK:
		rc = sufs_symlink(fs, dir, mk->name, len, mk->target, &cred, &ino);
		break;
	case MAKE_FILE:
		rc = sufs_create(fs, dir, mk->name, len, (uint32_t)mk->mode & 07777, &cred, &ino);
		break;
	}
	if (rc)
		return fuse_errno(m, rc, "making a name in", dir);
	if (acl) {
		rc = sufs_acl_inherit(fs, dir, ino, (uint32_t)asked, &acl);
		if (rc)
			return fuse_errno(m, rc, "giving the default ACL to", ino);
	}
	return entry_of(m, dir, ino, e);
}

static void make_reply(fuse_req_t req, fuse_ino_t parent, struct make *mk)
{
	struct mount *m = mount_of(req);
	struct fuse_entry_param e;
	int err;

	sufs_lock(m->fs);
	err = make(req, parent, mk, &e);
	sufs_unlock(m->fs);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_entry(req, &e);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	struct make mk = { .kind = MAKE_NODE, .name = name, .mode = mode, .rdev = rdev };

	make_reply(req, parent, &mk);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct make mk = { .kind = MAKE_DIR, .name = name, .mode = S_IFDIR | (mode & 07777) };

	make_reply(req, parent, &mk);
}

static void op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	struct make mk = { .kind = MAKE_SYMLINK, .name = name, .mode = S_IFLNK | 0777,
			   .target = target };

	make_reply(req, parent, &mk);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	struct make mk = { .kind = MAKE_FILE, .name = name, .mode = S_IFREG | (mode & 07777) };
	struct fuse_entry_param e;
	int err;

	sufs_lock(m->fs);
	err = make(req, parent, &mk, &e);
	sufs_unlock(m->fs);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->keep_cache = 1; /* nothing but this daemon changes a file's data */
	if (fuse_reply_create(req, &e, fi))
		unref(m, e.ino);
}

static void op_link(fuse_req_t req, fuse_ino_t node, fuse_ino_t newparent, const char *newname)
{
	struct mount *m = mount_of(req);
	struct fuse_entry_param e;
	uint32_t ino = ino_of(node), dir = ino_of(newparent);
	int rc, err;

	sufs_lock(m->fs);
	rc = sufs_link(m->fs, ino, dir, newname, strlen(newname));
	err = rc ? fuse_errno(m, rc, "linking", ino) : entry_of(m, dir, ino, &e);
	sufs_unlock(m->fs);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_entry(req, &e);
}

/* ---- removing and moving names ------------------------------------------------------------ */

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mount *m = mount_of(req);
	uint32_t dir = ino_of(parent);
	int rc;

	sufs_lock(m->fs);
	rc = sufs_unlink(m->fs, dir, name, strlen(name));
	sufs_unlock(m->fs);
	fuse_reply_err(req, fuse_errno(m, rc, "removing a name from", dir));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mount *m = mount_of(req);
	uint32_t dir = ino_of(parent);
	int rc;

	sufs_lock(m->fs);
	rc = sufs_rmdir(m->fs, dir, name, strlen(name));
	sufs_unlock(m->fs);
	fuse_reply_err(req, fuse_errno(m, rc, "removing a directory from", dir));
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	static atomic_int exchange_noted;
	struct mount *m = mount_of(req);
	uint32_t sdir = ino_of(parent), ddir = ino_of(newparent), other;
	int rc;

	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		/* an exchange is two names changed at once, which the library
		 * cannot order so that a crash leaves only leaks */
		if ((flags & RENAME_EXCHANGE) && !atomic_exchange(&exchange_noted, 1))
			note(m, LOG_INFO, "rename: RENAME_EXCHANGE is not supported (EINVAL)");
		fuse_reply_err(req, EINVAL);
		return;
	}
	sufs_lock(m->fs);
	rc = 0;
	if (flags & RENAME_NOREPLACE) {
		rc = sufs_lookup(m->fs, ddir, newname, strlen(newname), &other);
		rc = rc == 0 ? -EEXIST : rc == -ENOENT ? 0 : rc;
	}
	if (!rc)
		rc = sufs_rename(m->fs, sdir, name, strlen(name), ddir, newname, strlen(newname));
	sufs_unlock(m->fs);
	fuse_reply_err(req, fuse_errno(m, rc, "renaming a name of", sdir));
}

/* ---- the file system ---------------------------------------------------------------------- */

static void op_statfs(fuse_req_t req, fuse_ino_t node)
{
	struct mount *m = mount_of(req);
	const struct sufs_super *sb;
	struct statvfs st;

	(void)node;
	memset(&st, 0, sizeof(st));
	sufs_lock(m->fs);
	sb = sufs_get_super(m->fs);
	st.f_bsize = sb->block_size;
	st.f_frsize = sb->block_size;
	st.f_blocks = sb->blocks_count;
	st.f_bfree = sb->free_blocks;
	st.f_bavail = sb->free_blocks; /* nothing is reserved for root */
	st.f_files = sb->inodes_count;
	st.f_ffree = sb->free_inodes;
	st.f_favail = sb->free_inodes;
	sufs_unlock(m->fs);
	st.f_namemax = SUFS_NAME_MAX;
	fuse_reply_statfs(req, &st);
}

const struct fuse_lowlevel_ops sufs_fuse_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.create = op_create,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.release = op_release,
	.fsync = op_fsync,
	.fallocate = op_fallocate,
	.lseek = op_lseek,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.statfs = op_statfs,
	.getxattr = op_getxattr,
	.setxattr = op_setxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
};
