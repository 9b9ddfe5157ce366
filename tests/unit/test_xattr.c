/*
 * test_xattr.c - extended attributes and POSIX ACLs: their bytes (an area
 * of entries, an ACL), the four calls as Linux answers them, every error,
 * where the attributes live (the inode, then a block, then the inode
 * again), the order in which that reaches the disk (the three rules,
 * seen through the engine's view), the ACL kept in step with the mode,
 * and an image without the feature.
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct sufs_cred user = { 1000, 100 };
static const struct sufs_cred other = { 2000, 200 };

static int setup_softdep(void **state)
{
	return tu_setup_1k(state);
}

static int setup_sync(void **state)
{
	int rc = tu_setup_1k(state);

	if (!rc)
		rc = sufs_set_mode(((struct tfs *)*state)->fs, SUFS_MODE_SYNC);
	return rc;
}

static uint32_t create(struct sufs_fs *fs, uint32_t dir, const char *name, uint32_t mode)
{
	uint32_t ino = 0;

	assert_int_equal(sufs_create(fs, dir, name, strlen(name), mode, &user, &ino), 0);
	return ino;
}

static uint32_t mkdir_(struct sufs_fs *fs, uint32_t dir, const char *name, uint32_t mode)
{
	uint32_t ino = 0;

	assert_int_equal(sufs_mkdir(fs, dir, name, strlen(name), mode, &user, &ino), 0);
	return ino;
}

static void set(struct sufs_fs *fs, uint32_t ino, const char *name, const char *value)
{
	assert_int_equal(sufs_setxattr(fs, ino, name, value, strlen(value), 0, NULL), 0);
}

/* The value of name as a string ("" when absent: ENODATA). */
static const char *get(struct sufs_fs *fs, uint32_t ino, const char *name)
{
	static char buf[SUFS_XATTR_SIZE_MAX + 1];
	size_t len = 0;
	int rc = sufs_getxattr(fs, ino, name, buf, sizeof(buf) - 1, &len, NULL);

	if (rc == -ENODATA)
		return "";
	assert_int_equal(rc, 0);
	buf[len] = '\0';
	return buf;
}

static struct sufs_inode inode(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;

	assert_int_equal(sufs_inode_get(fs, ino, &in), 0);
	return in;
}

static int block_used(struct sufs_fs *fs, uint64_t blk)
{
	int set = 0;

	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, blk, &set), 0);
	return set;
}

/* An ACL in Linux's xattr form: entries of (tag, perm, id). */
static size_t acl(uint8_t *out, const unsigned (*e)[3], size_t n)
{
	size_t i;

	put32(out, 2);
	for (i = 0; i < n; i++) {
		put16(out + 4 + 8 * i, (uint16_t)e[i][0]);
		put16(out + 6 + 8 * i, (uint16_t)e[i][1]);
		put32(out + 8 + 8 * i, e[i][2]);
	}
	return 4 + 8 * n;
}

/* ---- the bytes ------------------------------------------------------------------ */

/* An entry written by hand into an area at off; its size. */
static size_t entry(uint8_t *a, size_t off, unsigned ns, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	a[off] = (uint8_t)ns;
	a[off + 1] = (uint8_t)nl;
	put16(a + off + 2, (uint16_t)vl);
	memcpy(a + off + 4, name, nl);
	memcpy(a + off + 4 + nl, value, vl);
	return (4 + nl + vl + 3) & ~(size_t)3;
}

static void an_area_of_sorted_entries_passes_and_each_damage_is_named(void **state)
{
	uint8_t a[64];
	const char *why;
	size_t off, bad;

	(void)state;
	memset(a, 0, sizeof(a));
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), 0); /* empty */
	off = entry(a, 0, SUFS_XATTR_USER, "a", "1");
	off += entry(a, off, SUFS_XATTR_USER, "ab", "");
	entry(a, off, SUFS_XATTR_SECURITY, "a", "xyz");
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), 0);

	a[off] = 5; /* no such namespace */
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), -SUFS_ECORRUPT);
	assert_string_equal(why, "an unknown namespace");
	assert_int_equal(bad, off);
	a[off] = SUFS_XATTR_USER; /* user.a after user.ab: out of order */
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), -SUFS_ECORRUPT);
	assert_string_equal(why, "entries out of order, or twice");
	a[off] = SUFS_XATTR_SECURITY;
	a[off + 1] = 0; /* a name of nothing outside an ACL */
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), -SUFS_ECORRUPT);
	assert_string_equal(why, "a bad name length");
	a[off + 1] = 1;
	put16(a + off + 2, 60); /* past the end */
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), -SUFS_ECORRUPT);
	assert_string_equal(why, "an entry crosses the end");
	put16(a + off + 2, 3);
	a[off + 4] = 0; /* NUL in the name */
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), -SUFS_ECORRUPT);
	assert_string_equal(why, "a NUL in a name");
	a[off + 4] = 'a';
	a[6] = 'c'; /* user.a's padding (its value is byte 5) */
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), -SUFS_ECORRUPT);
	assert_string_equal(why, "padding that is not zero");
	a[6] = 0;
	a[63] = 1; /* after the last entry */
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), -SUFS_ECORRUPT);
	assert_string_equal(why, "bytes after the last entry");
	a[63] = 0;
	assert_int_equal(sufs_xattr_check(a, sizeof(a), &why, &bad), 0);
}

static void acls_are_checked_as_linux_checks_them(void **state)
{
	static const unsigned plain[][3] = { { 1, 6, ~0u }, { 4, 4, ~0u }, { 0x20, 4, ~0u } };
	static const unsigned named[][3] = { { 1, 6, ~0u }, { 2, 7, 1000 }, { 4, 4, ~0u },
					     { 0x10, 7, ~0u }, { 0x20, 0, ~0u } };
	static const unsigned nomask[][3] = { { 1, 6, ~0u }, { 2, 7, 1000 }, { 4, 4, ~0u },
					      { 0x20, 0, ~0u } };
	static const unsigned order[][3] = { { 4, 4, ~0u }, { 1, 6, ~0u }, { 0x20, 4, ~0u } };
	uint8_t v[64];
	size_t n;

	(void)state;
	n = acl(v, plain, 3);
	assert_int_equal(sufs_acl_check(v, n, NULL), 0);
	assert_true(acl_is_mode(v, n));
	assert_int_equal(acl_mode(v, n, 0100777), 0100644);
	n = acl(v, named, 5);
	assert_int_equal(sufs_acl_check(v, n, NULL), 0);
	assert_false(acl_is_mode(v, n));
	assert_int_equal(acl_mode(v, n, 0100000), 0100670); /* the group bits: the mask's */
	acl_chmod(v, n, 0640);
	assert_int_equal(get16(v + 4 + 3 * 8 + 2), 4);   /* the mask took the group bits */
	assert_int_equal(get16(v + 4 + 2 * 8 + 2), 4);   /* the group entry kept its own */
	v[6] = 8; /* permissions beyond rwx */
	assert_int_equal(sufs_acl_check(v, n, NULL), -EINVAL);
	assert_int_equal(sufs_acl_check(v, acl(v, nomask, 4), NULL), -EINVAL);
	assert_int_equal(sufs_acl_check(v, acl(v, order, 3), NULL), -EINVAL);
	n = acl(v, plain, 3);
	assert_int_equal(sufs_acl_check(v, n - 1, NULL), -EINVAL); /* not whole entries */
	assert_int_equal(sufs_acl_check(v, 4, NULL), -EINVAL);     /* none */
	v[0] = 1;                                                   /* version 1 */
	assert_int_equal(sufs_acl_check(v, n, NULL), -EINVAL);
}

/* ---- the calls --------------------------------------------------------------------- */

static void set_get_list_and_remove_answer_with_linux_sizes(void **state)
{
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f", 0644);
	char buf[64];
	size_t len = 99;

	assert_int_equal(sufs_listxattr(t->fs, f, buf, sizeof(buf), &len, NULL), 0);
	assert_int_equal(len, 0);
	set(t->fs, f, "user.b", "two");
	set(t->fs, f, "user.a", "one");
	assert_int_equal(sufs_setxattr(t->fs, f, "trusted.t", "", 0, 0, NULL), 0);
	/* size 0: the length only */
	assert_int_equal(sufs_getxattr(t->fs, f, "user.a", NULL, 0, &len, NULL), 0);
	assert_int_equal(len, 3);
	assert_int_equal(sufs_getxattr(t->fs, f, "user.a", buf, 2, &len, NULL), -ERANGE);
	assert_string_equal(get(t->fs, f, "user.b"), "two");
	assert_string_equal(get(t->fs, f, "trusted.t"), "");
	assert_int_equal(sufs_getxattr(t->fs, f, "trusted.t", buf, 1, &len, NULL), 0);
	assert_int_equal(len, 0);
	/* the names in the order they are kept, each with its prefix and a NUL */
	assert_int_equal(sufs_listxattr(t->fs, f, NULL, 0, &len, NULL), 0);
	assert_int_equal(len, 24);
	assert_int_equal(sufs_listxattr(t->fs, f, buf, 23, &len, NULL), -ERANGE);
	assert_int_equal(sufs_listxattr(t->fs, f, buf, sizeof(buf), &len, NULL), 0);
	assert_memory_equal(buf, "user.a\0user.b\0trusted.t\0", 24);
	/* replace, remove */
	set(t->fs, f, "user.a", "uno");
	assert_string_equal(get(t->fs, f, "user.a"), "uno");
	assert_int_equal(sufs_removexattr(t->fs, f, "user.a", NULL), 0);
	assert_string_equal(get(t->fs, f, "user.a"), "");
	/* they stay across a close */
	tu_reopen(t, 0);
	assert_string_equal(get(t->fs, f, "user.b"), "two");
	assert_int_equal(sufs_listxattr(t->fs, f, buf, sizeof(buf), &len, NULL), 0);
	assert_int_equal(len, 17);
}

static void every_error_is_linuxs(void **state)
{
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f", 0644), p = 0, l = 0, d;
	char name[300], buf[8];
	uint8_t *big = calloc(1, SUFS_XATTR_SIZE_MAX + 1);
	size_t len;

	assert_non_null(big);
	assert_int_equal(sufs_mknod(t->fs, SUFS_ROOT_INO, "p", 1, S_IFIFO | 0644, 0, 0, &user, &p),
			 0);
	assert_int_equal(sufs_symlink(t->fs, SUFS_ROOT_INO, "l", 1, "f", &user, &l), 0);
	d = mkdir_(t->fs, SUFS_ROOT_INO, "d", 01777);
	/* ENODATA: none such, to read, remove, or replace */
	assert_int_equal(sufs_getxattr(t->fs, f, "user.x", buf, sizeof(buf), &len, NULL), -ENODATA);
	assert_int_equal(sufs_removexattr(t->fs, f, "user.x", NULL), -ENODATA);
	assert_int_equal(sufs_setxattr(t->fs, f, "user.x", "v", 1, SUFS_XATTR_REPLACE, NULL),
			 -ENODATA);
	/* EEXIST: create over one */
	set(t->fs, f, "user.x", "v");
	assert_int_equal(sufs_setxattr(t->fs, f, "user.x", "w", 1, SUFS_XATTR_CREATE, NULL),
			 -EEXIST);
	assert_string_equal(get(t->fs, f, "user.x"), "v");
	/* ERANGE: names empty or too long */
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[SUFS_XATTR_NAME_MAX + 1] = '\0';
	assert_int_equal(sufs_setxattr(t->fs, f, name, "v", 1, 0, NULL), -ERANGE);
	name[SUFS_XATTR_NAME_MAX] = '\0';
	assert_int_equal(sufs_setxattr(t->fs, f, name, "v", 1, 0, NULL), 0);
	assert_int_equal(sufs_getxattr(t->fs, f, "", buf, sizeof(buf), &len, NULL), -ERANGE);
	/* E2BIG: a value past 64 KiB; ENOSPC: one that fits no block */
	assert_int_equal(sufs_setxattr(t->fs, f, "user.big", big, SUFS_XATTR_SIZE_MAX + 1, 0,
				       NULL), -E2BIG);
	assert_int_equal(sufs_setxattr(t->fs, f, "user.big", big, 2000, 0, NULL), -ENOSPC);
	/* EOPNOTSUPP: an unknown namespace; EINVAL: a prefix alone */
	assert_int_equal(sufs_setxattr(t->fs, f, "foo.bar", "v", 1, 0, NULL), -EOPNOTSUPP);
	assert_int_equal(sufs_getxattr(t->fs, f, "system.posix_acl_other", buf, 8, &len, NULL),
			 -EOPNOTSUPP);
	assert_int_equal(sufs_setxattr(t->fs, f, "user.", "v", 1, 0, NULL), -EINVAL);
	assert_int_equal(sufs_setxattr(t->fs, f, "user.y", "v", 1, 4, NULL), -EINVAL);
	/* EPERM: trusted. without privilege; it reads as nothing, lists as nothing */
	assert_int_equal(sufs_setxattr(t->fs, f, "trusted.t", "v", 1, 0, &user), -EPERM);
	assert_int_equal(sufs_setxattr(t->fs, f, "trusted.t", "v", 1, 0, NULL), 0);
	assert_int_equal(sufs_removexattr(t->fs, f, "trusted.t", &user), -EPERM);
	assert_int_equal(sufs_getxattr(t->fs, f, "trusted.t", buf, 8, &len, &user), -ENODATA);
	assert_int_equal(sufs_listxattr(t->fs, f, NULL, 0, &len, &user), 0);
	assert_int_equal(len, 7 + SUFS_XATTR_NAME_MAX + 1);
	/* EPERM: user. on what is neither a file nor a directory, and in a
	 * sticky directory for all but its owner */
	assert_int_equal(sufs_setxattr(t->fs, p, "user.x", "v", 1, 0, NULL), -EPERM);
	assert_int_equal(sufs_setxattr(t->fs, l, "user.x", "v", 1, 0, NULL), -EPERM);
	assert_int_equal(sufs_getxattr(t->fs, p, "user.x", buf, 8, &len, NULL), -ENODATA);
	assert_int_equal(sufs_setxattr(t->fs, d, "user.x", "v", 1, 0, &other), -EPERM);
	assert_int_equal(sufs_setxattr(t->fs, d, "user.x", "v", 1, 0, &user), 0);
	assert_int_equal(sufs_setxattr(t->fs, p, "security.x", "v", 1, 0, &other), 0);
	free(big);
}

static void acls_keep_the_mode_in_step_and_are_checked(void **state)
{
	static const unsigned named[][3] = { { 1, 7, ~0u }, { 2, 5, 1000 }, { 4, 4, ~0u },
					     { 0x10, 5, ~0u }, { 0x20, 1, ~0u } };
	static const unsigned plain[][3] = { { 1, 6, ~0u }, { 4, 0, ~0u }, { 0x20, 0, ~0u } };
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f", 0644), d, l = 0;
	struct sufs_setattr sa = { .mask = SUFS_SET_MODE, .mode = 0600 };
	uint8_t v[64], got[64];
	size_t n = acl(v, named, 5), len;

	d = mkdir_(t->fs, SUFS_ROOT_INO, "d", 0755);
	assert_int_equal(sufs_symlink(t->fs, SUFS_ROOT_INO, "l", 1, "f", &user, &l), 0);
	assert_int_equal(sufs_setxattr(t->fs, f, "system.posix_acl_access", v, n, 0, NULL), 0);
	assert_int_equal(inode(t->fs, f).mode, 0100751);
	/* chmod: the owner, mask and other entries follow */
	assert_int_equal(sufs_setattr(t->fs, f, &sa), 0);
	assert_int_equal(sufs_getxattr(t->fs, f, "system.posix_acl_access", got, sizeof(got),
				       &len, NULL), 0);
	assert_int_equal(len, n);
	assert_int_equal(get16(got + 4 + 2), 6);          /* owner rw- */
	assert_int_equal(get16(got + 4 + 3 * 8 + 2), 0);  /* mask --- */
	assert_int_equal(get16(got + 4 + 4 * 8 + 2), 0);  /* other --- */
	assert_int_equal(get16(got + 4 + 8 + 2), 5);      /* the named user kept r-x */
	/* an ACL the mode says all of is kept as the mode only */
	n = acl(v, plain, 3);
	assert_int_equal(sufs_setxattr(t->fs, f, "system.posix_acl_access", v, n, 0, NULL), 0);
	assert_int_equal(inode(t->fs, f).mode, 0100600);
	assert_int_equal(sufs_getxattr(t->fs, f, "system.posix_acl_access", got, 64, &len, NULL),
			 -ENODATA);
	/* errors: malformed, a default ACL on a file, any on a symlink, by
	 * another than the owner */
	v[6] = 9;
	assert_int_equal(sufs_setxattr(t->fs, f, "system.posix_acl_access", v, n, 0, NULL), -EINVAL);
	v[6] = 6;
	assert_int_equal(sufs_setxattr(t->fs, f, "system.posix_acl_default", v, n, 0, NULL),
			 -EACCES);
	assert_int_equal(sufs_setxattr(t->fs, l, "system.posix_acl_access", v, n, 0, NULL),
			 -EOPNOTSUPP);
	n = acl(v, named, 5);
	assert_int_equal(sufs_setxattr(t->fs, d, "system.posix_acl_default", v, n, 0, &other),
			 -EPERM);
	assert_int_equal(sufs_setxattr(t->fs, d, "system.posix_acl_default", v, n, 0, &user), 0);
	assert_int_equal(inode(t->fs, d).mode, 040755); /* a default ACL leaves it */
	/* an empty value removes an ACL */
	assert_int_equal(sufs_setxattr(t->fs, d, "system.posix_acl_default", "", 0, 0, NULL), 0);
	assert_int_equal(sufs_listxattr(t->fs, d, NULL, 0, &len, NULL), 0);
	assert_int_equal(len, 0);
}

static void a_new_file_takes_its_directorys_default_acl_cut_to_its_mode(void **state)
{
	/* user::rwx user:1000:rwx group::r-x mask::rwx other::r-x */
	static const unsigned dflt[][3] = { { 1, 7, ~0u }, { 2, 7, 1000 }, { 4, 5, ~0u },
					    { 0x10, 7, ~0u }, { 0x20, 5, ~0u } };
	struct tfs *t = *state;
	uint32_t d = mkdir_(t->fs, SUFS_ROOT_INO, "d", 0755), f, sub, plain, l = 0;
	uint8_t v[64], got[64];
	size_t n = acl(v, dflt, 5), len;
	int inherited = -1;
	struct sufs_check_opts o = { .flags = SUFS_CHECK_NO | SUFS_CHECK_FORCE };
	struct sufs_check_result r;
	uint32_t cut = 0;
	int has = -1;

	/* no default ACL: nothing changes, the caller applies its umask */
	assert_int_equal(sufs_acl_create_mode(t->fs, SUFS_ROOT_INO, 0100666, &cut, &has), 0);
	assert_int_equal(has, 0);
	assert_int_equal(cut, 0100666);
	plain = create(t->fs, SUFS_ROOT_INO, "plain", 0666);
	assert_int_equal(sufs_acl_inherit(t->fs, SUFS_ROOT_INO, plain, 0666, &inherited), 0);
	assert_int_equal(inherited, 0);
	assert_int_equal(inode(t->fs, plain).mode, 0100666);
	assert_int_equal(sufs_listxattr(t->fs, plain, NULL, 0, &len, NULL), 0);
	assert_int_equal(len, 0);
	/* a file made 0640: owner rw-, mask r--, other ---; the named entry
	 * is kept whole (the mask cuts it) */
	assert_int_equal(sufs_setxattr(t->fs, d, "system.posix_acl_default", v, n, 0, NULL), 0);
	/* made first with no more than the owner, owning group and other
	 * entries grant: 0666 -> 0644 (group r-x), 0640 as it is */
	assert_int_equal(sufs_acl_create_mode(t->fs, d, 0100666, &cut, &has), 0);
	assert_int_equal(has, 1);
	assert_int_equal(cut, 0100644);
	assert_int_equal(sufs_acl_create_mode(t->fs, d, 0100640, &cut, &has), 0);
	assert_int_equal(cut, 0100640);
	f = create(t->fs, d, "f", 0640);
	assert_int_equal(sufs_acl_inherit(t->fs, d, f, 0640, &inherited), 0);
	assert_int_equal(inherited, 1);
	assert_int_equal(inode(t->fs, f).mode, 0100640);
	assert_int_equal(sufs_getxattr(t->fs, f, "system.posix_acl_access", got, sizeof(got),
				       &len, NULL), 0);
	assert_int_equal(len, n);
	assert_int_equal(get16(got + 4 + 2), 6);          /* owner rw- */
	assert_int_equal(get16(got + 4 + 8 + 2), 7);      /* user:1000 rwx */
	assert_int_equal(get16(got + 4 + 2 * 8 + 2), 5);  /* group r-x */
	assert_int_equal(get16(got + 4 + 3 * 8 + 2), 4);  /* mask r-- */
	assert_int_equal(get16(got + 4 + 4 * 8 + 2), 0);  /* other --- */
	assert_int_equal(sufs_getxattr(t->fs, f, "system.posix_acl_default", got, sizeof(got),
				       &len, NULL), -ENODATA);
	/* a directory keeps the default ACL as its own too */
	sub = mkdir_(t->fs, d, "sub", 0755);
	assert_int_equal(sufs_acl_inherit(t->fs, d, sub, 0777, &inherited), 0);
	assert_int_equal(inode(t->fs, sub).mode, 040775); /* other r-x */
	assert_int_equal(sufs_getxattr(t->fs, sub, "system.posix_acl_default", got, sizeof(got),
				       &len, NULL), 0);
	assert_memory_equal(got, v, n);
	/* a symbolic link takes none */
	assert_int_equal(sufs_symlink(t->fs, d, "l", 1, "f", &user, &l), 0);
	assert_int_equal(sufs_acl_inherit(t->fs, d, l, 0777, &inherited), 0);
	assert_int_equal(inherited, 0);
	assert_int_equal(inode(t->fs, l).mode, 0120777);
	/* and the image checks clean */
	tu_close(t);
	assert_int_equal(sufs_check(t->path, &o, &r), 0);
	assert_int_equal(r.problems, 0);
}

/* ---- where they live, and the order in which they reach the disk ------------------- */

/* The updates pending on one block, as the tools see them. */
struct seen_upd {
	const char *kind;
	uint32_t off, len;
	uint64_t id;
	unsigned nwaits;
	uint64_t waits[8];
};
struct seen {
	unsigned n;
	struct seen_upd u[64];
};

static int record(void *arg, const struct sufs_dep_block *b)
{
	struct seen *s = arg;
	size_t i;
	unsigned k;

	for (i = 0; i < b->ndeps && s->n < 64; i++, s->n++) {
		s->u[s->n].kind = b->deps[i].kind;
		s->u[s->n].off = b->deps[i].off;
		s->u[s->n].len = b->deps[i].len;
		s->u[s->n].id = b->deps[i].id;
		s->u[s->n].nwaits = b->deps[i].nwaits;
		for (k = 0; k < b->deps[i].nwaits && k < 8; k++)
			s->u[s->n].waits[k] = b->deps[i].waits[k];
	}
	return 0;
}

/* The newest pending update over [off, off+len) of blk, or NULL. */
static const struct seen_upd *pending_over(struct sufs_fs *fs, uint64_t blk, uint32_t off,
					   uint32_t len, struct seen *s)
{
	unsigned i;
	const struct seen_upd *found = NULL;

	memset(s, 0, sizeof(*s));
	assert_int_equal(sufs_deps_walk(fs, blk, record, s), 0);
	for (i = 0; i < s->n; i++)
		if (s->u[i].off < off + len && off < s->u[i].off + s->u[i].len)
			found = &s->u[i];
	return found;
}

static void inode_place(struct sufs_fs *fs, uint32_t ino, uint64_t *blk, uint32_t *off)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct sufs_group gd;
	uint32_t idx = (ino - 1) % sb->inodes_per_group;

	assert_int_equal(sufs_get_group(fs, (ino - 1) / sb->inodes_per_group, &gd), 0);
	*blk = gd.inode_table + idx / (sb->block_size / SUFS_INODE_SIZE);
	*off = idx % (sb->block_size / SUFS_INODE_SIZE) * SUFS_INODE_SIZE;
}

static void attributes_grow_into_a_block_after_it_and_shrink_back_before_it_goes(void **state)
{
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f", 0644), off;
	char value[200];
	struct seen s, sb;
	const struct seen_upd *u;
	uint64_t iblk, blk, free0;
	unsigned i, k, waits_block = 0;

	assert_int_equal(sufs_sync(t->fs), 0);
	free0 = sufs_get_super(t->fs)->free_blocks;
	inode_place(t->fs, f, &iblk, &off);
	set(t->fs, f, "user.a", "1");
	assert_int_equal(inode(t->fs, f).xattr_block, 0); /* in the inode */
	u = pending_over(t->fs, iblk, off + IN_XATTR, SUFS_XATTR_INLINE, &s);
	assert_non_null(u);
	assert_string_equal(u->kind, "extattr");

	/* grown: the pointer to the block waits for the block (rule 1) */
	memset(value, 'v', sizeof(value));
	value[sizeof(value) - 1] = '\0';
	set(t->fs, f, "user.b", value);
	blk = inode(t->fs, f).xattr_block;
	assert_true(blk != 0);
	assert_true(block_used(t->fs, blk));
	assert_true(mem_is_zero(inode(t->fs, f).xattr, SUFS_XATTR_INLINE));
	assert_string_equal(get(t->fs, f, "user.a"), "1");
	assert_string_equal(get(t->fs, f, "user.b"), value);
	u = pending_over(t->fs, iblk, off + IN_XATTR_BLOCK, 8, &s);
	assert_non_null(u);
	assert_string_equal(u->kind, "extattr");
	assert_non_null(pending_over(t->fs, blk, 0, 1024, &sb));
	for (i = 0; i < sb.n; i++)
		for (k = 0; k < u->nwaits; k++)
			waits_block += u->waits[k] == sb.u[i].id;
	assert_true(waits_block >= 1);

	/* in the block, changed in place: one update that waits for nothing */
	assert_int_equal(sufs_sync(t->fs), 0);
	set(t->fs, f, "user.a", "2");
	assert_int_equal(inode(t->fs, f).xattr_block, blk);
	u = pending_over(t->fs, blk, 0, 1024, &sb);
	assert_non_null(u);
	assert_string_equal(u->kind, "extattr");
	assert_int_equal(u->nwaits, 0);

	/* shrunk back: the block goes only once the pointer's clearing is on
	 * disk (rule 2), and the attributes are in the inode in the same
	 * update (rule 3) */
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_removexattr(t->fs, f, "user.b", NULL), 0);
	assert_int_equal(inode(t->fs, f).xattr_block, 0);
	assert_string_equal(get(t->fs, f, "user.a"), "2");
	u = pending_over(t->fs, iblk, off + IN_XATTR_BLOCK, 8, &s);
	assert_non_null(u);
	assert_true(u->off <= off + IN_XATTR_BLOCK && u->off + u->len > off + IN_XATTR);
	assert_true(block_used(t->fs, blk));
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_false(block_used(t->fs, blk));
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0);
	tu_assert_summaries(t->fs);
}

static void a_files_last_link_frees_its_attribute_block_once_its_inode_is_gone(void **state)
{
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f", 0644);
	char value[300];
	uint64_t blk, free0;

	assert_int_equal(sufs_sync(t->fs), 0);
	free0 = sufs_get_super(t->fs)->free_blocks;
	memset(value, 'w', sizeof(value));
	value[sizeof(value) - 1] = '\0';
	set(t->fs, f, "user.w", value);
	assert_int_equal(sufs_sync(t->fs), 0);
	blk = inode(t->fs, f).xattr_block;
	assert_true(blk && block_used(t->fs, blk));
	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "f", 1), 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_false(block_used(t->fs, blk));
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0 + 0);
	tu_assert_summaries(t->fs);
}

static void fsync_makes_attributes_durable_across_a_crash(void **state)
{
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f", 0644);
	char value[300];

	memset(value, 'z', sizeof(value));
	value[sizeof(value) - 1] = '\0';
	set(t->fs, f, "user.z", value);
	assert_int_equal(sufs_fsync(t->fs, f), 0);
	set(t->fs, f, "user.z", "short"); /* in the block, in place */
	set(t->fs, f, "user.y", value);
	assert_int_equal(sufs_fsync(t->fs, f), 0);
	sufs_abandon(t->fs);
	t->fs = NULL;
	assert_int_equal(sufs_open(t->path, 0, &t->fs), 0);
	assert_string_equal(get(t->fs, f, "user.z"), "short");
	assert_string_equal(get(t->fs, f, "user.y"), value);
}

static void an_image_without_the_feature_has_no_attributes_and_unknown_features_read_only(
	void **state)
{
	struct tfs *t = *state;
	struct sufs_mkfs_opts o;
	struct sufs_super sb;
	struct sufs_dev *dev;
	uint8_t raw[SUFS_SB_SIZE];
	uint32_t f;
	size_t len = 1;
	char buf[8];

	tu_destroy(t);
	tu_default_opts(&o, 1024);
	o.no_xattr = 1;
	tu_make_opts(t, 4 << 20, &o);
	tu_reopen(t, SUFS_OPEN_RDWR);
	assert_int_equal(sufs_get_super(t->fs)->features_ro_compat, 0);
	f = create(t->fs, SUFS_ROOT_INO, "f", 0644);
	assert_int_equal(sufs_setxattr(t->fs, f, "user.a", "1", 1, 0, NULL), -EOPNOTSUPP);
	assert_int_equal(sufs_getxattr(t->fs, f, "user.a", buf, 8, &len, NULL), -EOPNOTSUPP);
	assert_int_equal(sufs_listxattr(t->fs, f, buf, 8, &len, NULL), 0);
	assert_int_equal(len, 0);
	tu_close(t);

	/* a read-only feature this library does not know: read, never written */
	assert_int_equal(sufs_dev_open(t->path, SUFS_DEV_RDWR, &dev), 0);
	assert_int_equal(sufs_dev_read(dev, SUFS_SB_OFFSET, raw, sizeof(raw)), 0);
	sufs_super_decode(raw, &sb);
	sb.features_ro_compat |= 0x80000000u;
	sufs_super_encode(&sb, raw);
	assert_int_equal(sufs_dev_write(dev, SUFS_SB_OFFSET, raw, sizeof(raw)), 0);
	sufs_dev_close(dev);
	assert_int_equal(sufs_open(t->path, SUFS_OPEN_RDWR, &t->fs), -SUFS_EROFEATURE);
	t->fs = NULL;
	assert_int_equal(sufs_open(t->path, 0, &t->fs), 0);
	tu_close(t);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_softdep, tu_teardown)
#define IN_MODES(f) \
	{ #f " [softdep]", f, setup_softdep, tu_teardown, NULL }, \
	{ #f " [sync]", f, setup_sync, tu_teardown, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_area_of_sorted_entries_passes_and_each_damage_is_named),
		cmocka_unit_test(acls_are_checked_as_linux_checks_them),
		IN_MODES(set_get_list_and_remove_answer_with_linux_sizes),
		T(every_error_is_linuxs),
		T(acls_keep_the_mode_in_step_and_are_checked),
		IN_MODES(a_new_file_takes_its_directorys_default_acl_cut_to_its_mode),
		T(attributes_grow_into_a_block_after_it_and_shrink_back_before_it_goes),
		IN_MODES(a_files_last_link_frees_its_attribute_block_once_its_inode_is_gone),
		IN_MODES(fsync_makes_attributes_durable_across_a_crash),
		T(an_image_without_the_feature_has_no_attributes_and_unknown_features_read_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
