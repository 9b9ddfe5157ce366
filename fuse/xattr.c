/*
 * xattr.c - extended attributes, as the kernel asks for them: getxattr,
 * setxattr, listxattr, removexattr, each the library's call of the same
 * name (sufs_getxattr() and the others: Linux's namespaces and errors,
 * POSIX ACLs kept in step with the mode) with the caller's credentials.
 *
 * POSIX ACLs are the kernel's to enforce (FUSE_CAP_POSIX_ACL, asked for
 * in ops.c's op_init() on an image with attributes, unless -o noacl):
 * it reads system.posix_acl_access to check a permission and keeps what
 * it read; the daemon keeps the mode in step with the ACL (the library
 * does) and gives a new file its directory's default ACL (ops.c's
 * make()).  Setting an ACL changes the mode, so the kernel forgets the
 * attributes it holds of the file.
 */
#include "config.h"

#include "sufs-fuse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct sufs_cred cred_of(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return (struct sufs_cred){ .uid = ctx->uid, .gid = ctx->gid };
}

/* Reply with the len bytes of buf, or only the length when size is 0. */
static void reply_sized(fuse_req_t req, size_t size, const void *buf, size_t len)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
}

void op_getxattr(fuse_req_t req, fuse_ino_t node, const char *name, size_t size)
{
	struct mount *m = mount_of(req);
	struct sufs_cred cred = cred_of(req);
	void *buf = size ? malloc(size) : NULL;
	size_t len = 0;
	int rc, err;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	sufs_lock(m->fs);
	rc = sufs_getxattr(m->fs, ino_of(node), name, buf, size, &len, &cred);
	err = fuse_errno(m, rc, "reading an attribute of", ino_of(node));
	sufs_unlock(m->fs);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_sized(req, size, buf, len);
	free(buf);
}

void op_listxattr(fuse_req_t req, fuse_ino_t node, size_t size)
{
	struct mount *m = mount_of(req);
	struct sufs_cred cred = cred_of(req);
	char *buf = size ? malloc(size) : NULL;
	size_t len = 0;
	int rc, err;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	sufs_lock(m->fs);
	rc = sufs_listxattr(m->fs, ino_of(node), buf, size, &len, &cred);
	err = fuse_errno(m, rc, "listing the attributes of", ino_of(node));
	sufs_unlock(m->fs);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_sized(req, size, buf, len);
	free(buf);
}

/* An ACL changes the mode: the kernel's copy of the attributes goes. */
static void after_change(struct mount *m, fuse_ino_t node, const char *name)
{
	if (!strncmp(name, "system.posix_acl_", 17))
		fuse_lowlevel_notify_inval_inode(m->se, node, -1, 0);
}

void op_setxattr(fuse_req_t req, fuse_ino_t node, const char *name, const char *value,
		 size_t size, int flags)
{
	struct mount *m = mount_of(req);
	struct sufs_cred cred = cred_of(req);
	int rc, err;

	sufs_lock(m->fs);
	rc = sufs_setxattr(m->fs, ino_of(node), name, value, size, flags, &cred);
	err = fuse_errno(m, rc, "setting an attribute of", ino_of(node));
	sufs_unlock(m->fs);
	fuse_reply_err(req, err);
	if (!err)
		after_change(m, node, name);
}

void op_removexattr(fuse_req_t req, fuse_ino_t node, const char *name)
{
	struct mount *m = mount_of(req);
	struct sufs_cred cred = cred_of(req);
	int rc, err;

	sufs_lock(m->fs);
	rc = sufs_removexattr(m->fs, ino_of(node), name, &cred);
	err = fuse_errno(m, rc, "removing an attribute of", ino_of(node));
	sufs_unlock(m->fs);
	fuse_reply_err(req, err);
	if (!err)
		after_change(m, node, name);
}
