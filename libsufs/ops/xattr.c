/*
 * xattr.c - extended attributes and POSIX ACLs: get, set, list, remove,
 * and an access ACL kept in step with its file's mode.
 *
 * A file's attributes are in one place: its inode's own bytes when they
 * fit there, else one attribute block of its own (meta/xattr.c keeps
 * them).  A change reads them into one sorted area, changes it, and puts
 * it back in one of four ways, each stated in the three rules with the
 * engine's generic API, with no ordering of its own (doc/ARCHITECTURE.md,
 * "How to add an on-disk feature", walks through them):
 *
 *   in the inode before and after: one update of the inode's bytes, whole
 *     in every write of its block; nothing points anywhere.
 *   in the block before and after: the block is changed in place, one
 *     update that waits for nothing; every write of the block is whole,
 *     old or new, and the pointer to it stays.
 *   grown from the inode into a block: a new block, its bit and contents
 *     first; the inode's pointer to it, and its own bytes cleared, are one
 *     update that waits for them (rule 1).
 *   shrunk from the block back into the inode, or all removed: the
 *     pointer cleared and the inode's bytes set are one update (rule 3:
 *     the new home is set in the very write that drops the old one); the
 *     block is freed as deferred work once that update is on disk (rule 2).
 *
 * A file's last link going frees its attribute block with its other
 * blocks, after its zeroed inode is on disk (free.c: rule 2 again).
 */
#include "config.h"
#include "ops_int.h"

#include <stdlib.h>

/* A name split into its namespace and the part after the prefix. */
struct xname {
	unsigned ns;
	const char *name;
	size_t len;
};

static const unsigned namespaces[] = {
	SUFS_XATTR_USER, SUFS_XATTR_TRUSTED, SUFS_XATTR_SECURITY,
	SUFS_XATTR_ACL_ACCESS, SUFS_XATTR_ACL_DEFAULT,
};

/* Linux's answers for a name (fs/xattr.c): an empty or too long one is
 * ERANGE, an unknown namespace EOPNOTSUPP, a prefix alone EINVAL. */
static int parse_name(const char *name, struct xname *x)
{
	size_t len = name ? strnlen(name, SUFS_XATTR_NAME_MAX + 1) : 0, plen, i;
	const char *prefix;

	if (len == 0 || len > SUFS_XATTR_NAME_MAX)
		return -ERANGE;
	for (i = 0; i < sizeof(namespaces) / sizeof(namespaces[0]); i++) {
		x->ns = namespaces[i];
		prefix = sufs_xattr_prefix(x->ns);
		plen = strlen(prefix);
		if (x->ns == SUFS_XATTR_ACL_ACCESS || x->ns == SUFS_XATTR_ACL_DEFAULT) {
			if (strcmp(name, prefix) != 0)
				continue;
		} else if (strncmp(name, prefix, plen) != 0) {
			continue;
		} else if (len == plen) {
			return -EINVAL;
		}
		x->name = name + plen;
		x->len = len - plen;
		return 0;
	}
	return -EOPNOTSUPP;
}

static int privileged(const struct sufs_cred *cred)
{
	return !cred || cred->uid == 0;
}

static int is_acl(unsigned ns)
{
	return ns == SUFS_XATTR_ACL_ACCESS || ns == SUFS_XATTR_ACL_DEFAULT;
}

/*
 * May cred read (write 0) or change (write 1) attribute x of in?  As
 * Linux's xattr_permission() and the ACL handlers answer, mode bits
 * aside: trusted. is for the privileged (a read by others finds
 * nothing); user. for regular files and directories, and in a sticky
 * directory for its owner; an ACL is changed by the owner, and a symlink
 * has none.
 */
static int permitted(const struct sufs_inode *in, const struct xname *x,
		     const struct sufs_cred *cred, int write)
{
	int owner = privileged(cred) || cred->uid == in->uid;

	if (x->ns == SUFS_XATTR_TRUSTED && !privileged(cred))
		return write ? -EPERM : -ENODATA;
	if (x->ns == SUFS_XATTR_USER) {
		if (!S_ISREG(in->mode) && !S_ISDIR(in->mode))
			return write ? -EPERM : -ENODATA;
		if (write && S_ISDIR(in->mode) && (in->mode & S_ISVTX) && !owner)
			return -EPERM;
	}
	if (is_acl(x->ns)) {
		if (S_ISLNK(in->mode))
			return -EOPNOTSUPP;
		if (write && !owner)
			return -EPERM;
	}
	return 0;
}

static int feature(struct sufs_fs *fs)
{
	return (fs->sb.features_ro_compat & SUFS_FEATURE_RO_XATTR) ? 0 : -EOPNOTSUPP;
}

/* The file's attributes into a fresh area (xattr_area_max() bytes). */
static int area_load(struct sufs_fs *fs, const struct sufs_inode *in, uint8_t **area)
{
	int err;

	*area = malloc(xattr_area_max(fs));
	if (!*area)
		return -ENOMEM;
	err = xattr_load(fs, in, *area);
	if (err) {
		free(*area);
		*area = NULL;
	}
	return err;
}

int sufs_getxattr(struct sufs_fs *fs, uint32_t ino, const char *name, void *value,
		  size_t size, size_t *len, const struct sufs_cred *cred)
{
	struct sufs_inode in;
	struct xname x;
	uint8_t *area;
	size_t off, vlen;
	int err = parse_name(name, &x);

	if (!err)
		err = feature(fs);
	if (!err)
		err = load_live(fs, ino, &in);
	if (!err)
		err = permitted(&in, &x, cred, 0);
	if (!err)
		err = area_load(fs, &in, &area);
	if (err)
		return err;
	if (!xattr_find(area, xattr_area_max(fs), x.ns, x.name, x.len, &off)) {
		err = -ENODATA;
	} else {
		vlen = get16(area + off + XE_VALLEN);
		*len = vlen;
		if (size && size < vlen)
			err = -ERANGE;
		else if (size && vlen)
			memcpy(value, area + off + XE_NAME + area[off + XE_NAMELEN], vlen);
	}
	free(area);
	return err;
}

struct lister {
	char *list;
	size_t size, len;
	int trusted;
};

static int list_fn(void *arg, const struct sufs_xattr *e)
{
	struct lister *l = arg;
	const char *prefix = sufs_xattr_prefix(e->ns);
	size_t plen = strlen(prefix), n = plen + e->name_len + 1;

	if (e->ns == SUFS_XATTR_TRUSTED && !l->trusted)
		return 0;
	if (l->size && l->len + n <= l->size) {
		memcpy(l->list + l->len, prefix, plen);
		memcpy(l->list + l->len + plen, e->name, e->name_len);
		l->list[l->len + n - 1] = '\0';
	}
	l->len += n;
	return 0;
}

int sufs_listxattr(struct sufs_fs *fs, uint32_t ino, char *list, size_t size, size_t *len,
		   const struct sufs_cred *cred)
{
	struct sufs_inode in;
	struct lister l = { list, size, 0, privileged(cred) };
	uint8_t *area;
	int err = load_live(fs, ino, &in);

	if (err)
		return err;
	*len = 0;
	if (feature(fs))
		return 0; /* no attributes: an empty list, as Linux's */
	err = area_load(fs, &in, &area);
	if (err)
		return err;
	sufs_xattr_walk(area, xattr_area_max(fs), list_fn, &l);
	free(area);
	/* as listxattr(2): a buffer of the largest size that is still too
	 * small is E2BIG, a smaller one ERANGE */
	if (size && size < l.len)
		return size >= SUFS_XATTR_LIST_MAX ? -E2BIG : -ERANGE;
	*len = l.len;
	return 0;
}

/* ---- changing them --------------------------------------------------------- */

/*
 * Put area back as the attributes of ino (in, changed as the caller
 * wants it besides, is stored here), by whichever of the four ways of
 * the top of this file takes it from where it is to where it fits.
 */
static int area_store(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in,
		      const uint8_t *area)
{
	size_t used = xattr_area_used(area, xattr_area_max(fs));
	uint64_t old = in->xattr_block, blk;
	struct waits w = { 0 };
	struct freeing *f;
	upd_id id;
	int err;

	if (used > SUFS_XATTR_INLINE && old) {
		/* in the block, before and after */
		err = xattr_block_write(fs, old, area, &id);
		return err ? err : inode_store(fs, ino, in, UPD_EXTATTR, NULL, NULL);
	}
	if (used > SUFS_XATTR_INLINE) {
		/* grown into a new block: the pointer waits for it (rule 1) */
		err = xattr_block_new(fs, inode_goal(fs, ino), area, &blk, &w);
		if (err)
			return err;
		in->xattr_block = blk;
		memset(in->xattr, 0, sizeof(in->xattr));
		return inode_store(fs, ino, in, UPD_EXTATTR, &w, NULL);
	}
	/* in the inode: set in the same update that drops a block (rule 3) */
	memcpy(in->xattr, area, SUFS_XATTR_INLINE);
	in->xattr_block = 0;
	err = inode_store(fs, ino, in, UPD_EXTATTR, NULL, &id);
	if (err || !old)
		return err;
	/* the block goes once no pointer to it is left on disk (rule 2) */
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM; /* a leak, never a double use */
	err = blist_add(&f->blocks, old);
	if (err) {
		free(f);
		return err;
	}
	return deps_defer(fs, &id, 1, freeing_run, f);
}

/* An access ACL: the mode takes its permission bits, and one that the
 * mode says all of is not kept (the caller then removes it). */
static int acl_access_mode(struct sufs_inode *in, const void *value, size_t size)
{
	in->mode = acl_mode(value, size, in->mode);
	return acl_is_mode(value, size);
}

static int do_setxattr(struct sufs_fs *fs, uint32_t ino, const char *name, const void *value,
		       size_t size, int flags, const struct sufs_cred *cred, int remove)
{
	struct sufs_inode in;
	struct xname x;
	uint8_t *area;
	size_t off;
	int err = parse_name(name, &x), found;

	if (!err && size > SUFS_XATTR_SIZE_MAX)
		err = -E2BIG;
	if (!err && flags & ~(SUFS_XATTR_CREATE | SUFS_XATTR_REPLACE))
		err = -EINVAL;
	if (!err)
		err = feature(fs);
	if (!err)
		err = writable(fs);
	if (!err)
		err = load_mutable(fs, ino, &in);
	if (!err)
		err = permitted(&in, &x, cred, 1);
	if (err)
		return err;
	/* an ACL of no entries (or no bytes) is no ACL: removed */
	if (is_acl(x.ns) && !remove &&
	    (size == 0 || (size == ACL_HDR && get32(value) == ACL_XATTR_VERSION))) {
		remove = 1;
		flags &= ~SUFS_XATTR_REPLACE;
	}
	if (is_acl(x.ns) && !remove && sufs_acl_check(value, size, NULL))
		return -EINVAL;
	if (x.ns == SUFS_XATTR_ACL_DEFAULT && !S_ISDIR(in.mode))
		return remove ? 0 : -EACCES;
	err = area_load(fs, &in, &area);
	if (err)
		return err;
	found = xattr_find(area, xattr_area_max(fs), x.ns, x.name, x.len, &off);
	if (found && (flags & SUFS_XATTR_CREATE))
		err = -EEXIST;
	else if (!found && (flags & SUFS_XATTR_REPLACE))
		err = -ENODATA;
	if (!err && x.ns == SUFS_XATTR_ACL_ACCESS && !remove && acl_access_mode(&in, value, size))
		remove = 1;
	if (!err && remove && !found && !is_acl(x.ns))
		err = -ENODATA;
	if (!err && remove && found)
		xattr_remove_at(area, xattr_area_max(fs), off);
	if (!err && !remove)
		err = xattr_put(area, xattr_area_max(fs), x.ns, x.name, x.len, value, size);
	if (!err) {
		set_now(fs, &in, 0, 0, 1);
		err = area_store(fs, ino, &in, area);
	}
	free(area);
	return err;
}

int sufs_setxattr(struct sufs_fs *fs, uint32_t ino, const char *name, const void *value,
		  size_t size, int flags, const struct sufs_cred *cred)
{
	return fs_op_end(fs, do_setxattr(fs, ino, name, value, size, flags, cred, 0));
}

int sufs_removexattr(struct sufs_fs *fs, uint32_t ino, const char *name,
		     const struct sufs_cred *cred)
{
	return fs_op_end(fs, do_setxattr(fs, ino, name, NULL, 0, SUFS_XATTR_REPLACE, cred, 1));
}

/* dir's default ACL into a fresh *acl (*len bytes); *acl NULL when it has
 * none. */
static int default_acl(struct sufs_fs *fs, uint32_t dir, uint8_t **acl, size_t *len)
{
	struct sufs_inode in;
	uint8_t *area = NULL;
	size_t off;
	int err = load_live(fs, dir, &in);

	*acl = NULL;
	*len = 0;
	if (!err && S_ISDIR(in.mode))
		err = area_load(fs, &in, &area);
	if (!err && area &&
	    xattr_find(area, xattr_area_max(fs), SUFS_XATTR_ACL_DEFAULT, "", 0, &off)) {
		*len = get16(area + off + XE_VALLEN);
		*acl = malloc(*len);
		if (*acl)
			memcpy(*acl, area + off + XE_NAME + area[off + XE_NAMELEN], *len);
		else
			err = -ENOMEM;
	}
	free(area);
	return err;
}

int sufs_acl_create_mode(struct sufs_fs *fs, uint32_t dir, uint32_t mode, uint32_t *out,
			 int *has_default)
{
	uint8_t *acl;
	size_t len;
	uint16_t bits, group;
	int err;

	*out = mode;
	*has_default = 0;
	if (feature(fs))
		return 0;
	err = default_acl(fs, dir, &acl, &len);
	if (err || !acl)
		return err;
	*has_default = 1;
	/* the owner's, the other's and the group's class, narrowed to the
	 * owning group's own entry */
	bits = acl_mode(acl, len, 0);
	group = (uint16_t)(acl_group_obj(acl, len) << 3 | ~(uint16_t)070);
	*out = mode & ((uint32_t)(bits & group) | ~0777u);
	free(acl);
	return 0;
}

/*
 * A new file takes its directory's default ACL (acl(5), "Object creation
 * and default ACLs"; Linux's posix_acl_create()): its access ACL is the
 * default ACL with the owner, mask (or group) and other entries cut to
 * the mode it was asked for, and its mode follows; a new directory keeps
 * the default ACL as its own too.  Made with sufs_acl_create_mode()'s
 * mode, the file grants no more before these two changes than after.
 */
int sufs_acl_inherit(struct sufs_fs *fs, uint32_t dir, uint32_t ino, uint32_t mode,
		     int *inherited)
{
	struct sufs_inode in;
	uint8_t *acl = NULL;
	size_t len = 0;
	int err;

	*inherited = 0;
	if (feature(fs))
		return 0; /* no attributes, no default ACLs */
	err = default_acl(fs, dir, &acl, &len);
	if (!err && acl)
		err = load_live(fs, ino, &in);
	if (!err && acl && !S_ISLNK(in.mode)) {
		*inherited = 1;
		err = S_ISDIR(in.mode) ? do_setxattr(fs, ino,
						     sufs_xattr_prefix(SUFS_XATTR_ACL_DEFAULT),
						     acl, len, 0, NULL, 0) : 0;
		acl_chmod(acl, len, (uint16_t)(mode & acl_mode(acl, len, (uint16_t)mode)));
		if (!err)
			err = do_setxattr(fs, ino, sufs_xattr_prefix(SUFS_XATTR_ACL_ACCESS), acl,
					  len, 0, NULL, 0);
	}
	free(acl);
	return fs_op_end(fs, err);
}

/*
 * chmod: the access ACL's owner, mask (or group) and other entries take
 * the new permission bits (acl(5)).  in is the inode as the caller will
 * store it, with its new mode; an ACL in the inode changes there, one in
 * the block in place.  0 when there is none (or no feature).
 */
int xattr_acl_chmod(struct sufs_fs *fs, struct sufs_inode *in)
{
	uint8_t *area;
	size_t off, nlen;
	upd_id id;
	int err;

	if (feature(fs) || S_ISLNK(in->mode))
		return 0;
	err = area_load(fs, in, &area);
	if (err)
		return err;
	if (xattr_find(area, xattr_area_max(fs), SUFS_XATTR_ACL_ACCESS, "", 0, &off)) {
		nlen = area[off + XE_NAMELEN];
		acl_chmod(area + off + XE_NAME + nlen, get16(area + off + XE_VALLEN), in->mode);
		if (in->xattr_block)
			err = xattr_block_write(fs, in->xattr_block, area, &id);
		else
			memcpy(in->xattr, area, SUFS_XATTR_INLINE);
	}
	free(area);
	return err;
}
