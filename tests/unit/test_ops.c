/*
 * test_ops.c - the file-system operations as a program sees them: making
 * names of every kind, reading and writing, attributes, path resolution,
 * the error codes, running out of blocks and inodes, persistence across a
 * close, and reproducible images; removing and renaming names, truncating
 * through indirect trees and fsync, each in all three write modes.
 */
#include "config.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The clock the operations run with (mkfs used TU_TIME_SEC). */
#define NOW_SEC  (TU_TIME_SEC + 1000)
#define NOW_NSEC 42u

static const struct sufs_cred user = { 1000, 100 };

/* The 16 MiB, 4 KiB-block image, open for writing, clock fixed at NOW. */
static int setup(void **state)
{
	struct tfs *t;

	if (tu_setup_4k(state))
		return -1;
	t = *state;
	sufs_set_clock(t->fs, NOW_SEC, NOW_NSEC);
	return 0;
}

/* Replace the test's image by a small one with 1 KiB blocks. */
static void remake_small(struct tfs *t, uint64_t bytes, uint32_t inodes)
{
	struct sufs_mkfs_opts o;

	tu_destroy(t);
	tu_default_opts(&o, 1024);
	o.inodes = inodes;
	tu_make_opts(t, bytes, &o);
	tu_reopen(t, SUFS_OPEN_RDWR);
	sufs_set_clock(t->fs, NOW_SEC, NOW_NSEC);
}

static struct sufs_fs *fs_of(void **state)
{
	return ((struct tfs *)*state)->fs;
}

static uint32_t create(struct sufs_fs *fs, uint32_t dir, const char *name)
{
	uint32_t ino = 0;

	assert_int_equal(sufs_create(fs, dir, name, strlen(name), 0644, &user, &ino), 0);
	return ino;
}

static uint32_t mkdir_(struct sufs_fs *fs, uint32_t dir, const char *name)
{
	uint32_t ino = 0;

	assert_int_equal(sufs_mkdir(fs, dir, name, strlen(name), 0755, &user, &ino), 0);
	return ino;
}

static uint32_t symlink_(struct sufs_fs *fs, uint32_t dir, const char *name, const char *target)
{
	uint32_t ino = 0;

	assert_int_equal(sufs_symlink(fs, dir, name, strlen(name), target, &user, &ino), 0);
	return ino;
}

static uint32_t lookup(struct sufs_fs *fs, uint32_t dir, const char *name)
{
	uint32_t ino = 0;

	assert_int_equal(sufs_lookup(fs, dir, name, strlen(name), &ino), 0);
	return ino;
}

static int namei(struct sufs_fs *fs, uint32_t cwd, const char *path, int follow, uint32_t *ino)
{
	*ino = 0;
	return sufs_namei(fs, cwd, path, follow, ino);
}

static uint32_t resolve(struct sufs_fs *fs, uint32_t cwd, const char *path)
{
	uint32_t ino;
	int rc = namei(fs, cwd, path, 1, &ino);

	if (rc)
		fail_msg("\"%s\": %s", path, sufs_strerror(rc));
	return ino;
}

static struct sufs_stat stat_(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_stat st;

	assert_int_equal(sufs_stat(fs, ino, &st), 0);
	return st;
}

static void write_pattern(struct sufs_fs *fs, uint32_t ino, uint64_t off, size_t len,
			  uint32_t seed)
{
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	tu_pattern_fill(buf, len, seed, off);
	assert_int_equal(sufs_write(fs, ino, off, buf, len), 0);
	free(buf);
}

static void assert_pattern(struct sufs_fs *fs, uint32_t ino, uint64_t off, size_t len,
			   uint32_t seed)
{
	uint8_t *buf = malloc(len);
	size_t done = 0;
	long bad;

	assert_non_null(buf);
	assert_int_equal(sufs_read(fs, ino, off, buf, len, &done), 0);
	assert_int_equal(done, len);
	bad = tu_pattern_check(buf, len, seed, off);
	if (bad >= 0)
		fail_msg("inode %u: byte %llu differs", ino, (unsigned long long)(off + (uint64_t)bad));
	free(buf);
}

static void assert_readlink(struct sufs_fs *fs, uint32_t ino, const char *target)
{
	char buf[4096];
	size_t len = 0;

	assert_int_equal(sufs_readlink(fs, ino, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, strlen(target));
	assert_memory_equal(buf, target, len);
}

/* ---- making names ------------------------------------------------------------ */

static void create_makes_an_empty_file_with_mode_owner_and_the_current_time(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = create(fs, SUFS_ROOT_INO, "file");
	struct sufs_stat st = stat_(fs, ino), root = stat_(fs, SUFS_ROOT_INO);

	assert_int_equal(st.ino, ino);
	assert_true(ino >= SUFS_FIRST_INO);
	assert_int_equal(st.mode, S_IFREG | 0644);
	assert_int_equal(st.links, 1);
	assert_int_equal(st.uid, 1000);
	assert_int_equal(st.gid, 100);
	assert_int_equal(st.size, 0);
	assert_int_equal(st.blocks, 0);
	assert_int_equal(st.atime, NOW_SEC);
	assert_int_equal(st.mtime, NOW_SEC);
	assert_int_equal(st.ctime, NOW_SEC);
	assert_int_equal(st.crtime, NOW_SEC);
	assert_int_equal(st.mtime_ns, NOW_NSEC);
	assert_int_equal(st.crtime_ns, NOW_NSEC);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "file"), ino);
	/* the directory changed: its times move, its link count does not */
	assert_int_equal(root.mtime, NOW_SEC);
	assert_int_equal(root.ctime, NOW_SEC);
	assert_int_equal(root.links, 2);
}

static void create_without_credentials_belongs_to_root_and_keeps_special_bits(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino;
	struct sufs_stat st;

	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "s", 1, S_IFREG | 07755, NULL, &ino), 0);
	st = stat_(fs, ino);
	assert_int_equal(st.mode, S_IFREG | 07755);
	assert_int_equal(st.uid, 0);
	assert_int_equal(st.gid, 0);
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "t", 1, S_IFDIR | 0755, NULL, &ino),
			 -EINVAL);
}

static void mkdir_makes_dot_and_dotdot_and_raises_the_parents_link_count(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t a = mkdir_(fs, SUFS_ROOT_INO, "a");
	uint32_t b = mkdir_(fs, a, "b");
	struct sufs_stat st = stat_(fs, a);

	assert_int_equal(st.mode, S_IFDIR | 0755);
	assert_int_equal(st.links, 3);          /* its entry, its ".", b's ".." */
	assert_int_equal(st.size, 4096);
	assert_int_equal(st.blocks, 1);
	assert_int_equal(stat_(fs, b).links, 2);
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 3);
	assert_int_equal(lookup(fs, a, "."), a);
	assert_int_equal(lookup(fs, a, ".."), SUFS_ROOT_INO);
	assert_int_equal(lookup(fs, b, ".."), a);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, ".."), SUFS_ROOT_INO);
}

static void mknod_keeps_device_numbers_and_makes_fifos_and_sockets(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t chr, blk, fifo, sock, ino;
	struct sufs_stat st;

	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "tty", 3, S_IFCHR | 0620, 4, 64, &user,
				    &chr), 0);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "sda", 3, S_IFBLK | 0660, 8, 0x12345,
				    NULL, &blk), 0);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "p", 1, S_IFIFO | 0600, 9, 9, NULL, &fifo),
			 0);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "s", 1, S_IFSOCK | 0777, 0, 0, NULL,
				    &sock), 0);
	st = stat_(fs, chr);
	assert_int_equal(st.mode, S_IFCHR | 0620);
	assert_int_equal(st.rdev_major, 4);
	assert_int_equal(st.rdev_minor, 64);
	assert_int_equal(st.uid, 1000);
	st = stat_(fs, blk);
	assert_int_equal(st.mode, S_IFBLK | 0660);
	assert_int_equal(st.rdev_major, 8);
	assert_int_equal(st.rdev_minor, 0x12345);
	st = stat_(fs, fifo);
	assert_int_equal(st.mode, S_IFIFO | 0600);
	assert_int_equal(st.rdev_major, 0);     /* only devices have numbers */
	assert_int_equal(st.size, 0);
	assert_int_equal(stat_(fs, sock).mode, S_IFSOCK | 0777);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "d", 1, S_IFDIR | 0755, 0, 0, NULL, &ino),
			 -EINVAL);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "l", 1, S_IFLNK | 0777, 0, 0, NULL, &ino),
			 -EINVAL);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "d", 1, &ino), -ENOENT);
}

static void a_symlink_of_up_to_120_bytes_lives_in_its_inode(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	char target[SUFS_FAST_SYMLINK_MAX + 1];
	uint32_t ino, one;
	struct sufs_stat st;
	uint64_t pblk = 1;
	unsigned i;

	for (i = 0; i < SUFS_FAST_SYMLINK_MAX; i++)
		target[i] = (char)('A' + i % 26);
	target[SUFS_FAST_SYMLINK_MAX] = 0;
	ino = symlink_(fs, SUFS_ROOT_INO, "fast", target);
	st = stat_(fs, ino);
	assert_int_equal(st.mode, S_IFLNK | 0777);
	assert_int_equal(st.size, SUFS_FAST_SYMLINK_MAX);
	assert_int_equal(st.blocks, 0);
	assert_int_equal(sufs_bmap(fs, ino, 0, &pblk), 0);
	assert_int_equal(pblk, 0);
	assert_readlink(fs, ino, target);
	one = symlink_(fs, SUFS_ROOT_INO, "one", "x");
	assert_readlink(fs, one, "x");
	assert_int_equal(stat_(fs, one).size, 1);
}

static void a_longer_symlink_keeps_its_target_in_one_block(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	char target[4097];
	uint32_t ino, max;
	struct sufs_stat st;
	uint64_t pblk = 0;
	size_t len = 0;
	char small[10];

	memset(target, 'b', SUFS_FAST_SYMLINK_MAX + 1);
	target[SUFS_FAST_SYMLINK_MAX + 1] = 0;
	ino = symlink_(fs, SUFS_ROOT_INO, "slow", target);
	st = stat_(fs, ino);
	assert_int_equal(st.size, SUFS_FAST_SYMLINK_MAX + 1);
	assert_int_equal(st.blocks, 1);
	assert_int_equal(sufs_bmap(fs, ino, 0, &pblk), 0);
	assert_int_not_equal(pblk, 0);
	assert_readlink(fs, ino, target);

	/* the longest target: 4095 bytes, one less than a path's limit */
	memset(target, 'c', sizeof(target) - 1);
	target[sizeof(target) - 1] = 0;
	max = symlink_(fs, SUFS_ROOT_INO, "max", target + 1);
	assert_readlink(fs, max, target + 1);
	assert_int_equal(sufs_symlink(fs, SUFS_ROOT_INO, "long", 4, target, NULL, &ino),
			 -ENAMETOOLONG);
	assert_int_equal(sufs_symlink(fs, SUFS_ROOT_INO, "empty", 5, "", NULL, &ino), -ENOENT);

	/* a short buffer gets the start of the target */
	assert_int_equal(sufs_readlink(fs, max, small, sizeof(small), &len), 0);
	assert_int_equal(len, sizeof(small));
	assert_memory_equal(small, "cccccccccc", sizeof(small));
	assert_int_equal(sufs_readlink(fs, SUFS_ROOT_INO, small, sizeof(small), &len), -EINVAL);
}

static void link_adds_a_name_and_raises_the_link_count(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t f = create(fs, SUFS_ROOT_INO, "f");
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d");

	assert_int_equal(sufs_link(fs, f, d, "g", 1), 0);
	assert_int_equal(lookup(fs, d, "g"), f);
	assert_int_equal(stat_(fs, f).links, 2);
	assert_int_equal(sufs_link(fs, f, SUFS_ROOT_INO, "f2", 2), 0);
	assert_int_equal(stat_(fs, f).links, 3);
	assert_int_equal(sufs_link(fs, f, d, "g", 1), -EEXIST);
	assert_int_equal(stat_(fs, f).links, 3);
	assert_int_equal(sufs_link(fs, d, SUFS_ROOT_INO, "d2", 2), -EPERM);
	assert_int_equal(stat_(fs, d).links, 2);
}

/* ---- contents and attributes ------------------------------------------------- */

static void written_bytes_read_back_across_blocks_and_holes(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = create(fs, SUFS_ROOT_INO, "data");
	uint8_t buf[200];
	size_t done = 99;
	unsigned i;

	write_pattern(fs, ino, 5000, 100000, 1);
	assert_int_equal(stat_(fs, ino).size, 105000);
	assert_pattern(fs, ino, 5000, 100000, 1);
	/* the first 4096 bytes were never written: a hole */
	assert_int_equal(sufs_read(fs, ino, 0, buf, sizeof(buf), &done), 0);
	assert_int_equal(done, sizeof(buf));
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(stat_(fs, ino).blocks, 25 + 1); /* blocks 1-25, one indirect */

	/* an overwrite in the middle leaves its neighbours */
	write_pattern(fs, ino, 50000, 10, 2);
	assert_pattern(fs, ino, 50000, 10, 2);
	assert_pattern(fs, ino, 5000, 45000, 1);
	assert_pattern(fs, ino, 50010, 55000 - 10, 1);
	assert_int_equal(stat_(fs, ino).size, 105000);

	/* reads stop at the end of the file */
	assert_int_equal(sufs_read(fs, ino, 105000 - 10, buf, sizeof(buf), &done), 0);
	assert_int_equal(done, 10);
	assert_int_equal(tu_pattern_check(buf, 10, 1, 105000 - 10), -1);
	assert_int_equal(sufs_read(fs, ino, 105000, buf, sizeof(buf), &done), 0);
	assert_int_equal(done, 0);
	assert_int_equal(sufs_read(fs, ino, 1 << 30, buf, sizeof(buf), &done), 0);
	assert_int_equal(done, 0);
}

static void a_write_of_nothing_changes_nothing(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = create(fs, SUFS_ROOT_INO, "z");

	assert_int_equal(sufs_write(fs, ino, 1 << 20, "", 0), 0);
	assert_int_equal(stat_(fs, ino).size, 0);
	assert_int_equal(stat_(fs, ino).blocks, 0);
}

static void setattr_changes_what_its_mask_names_and_the_change_time(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = create(fs, SUFS_ROOT_INO, "f");
	struct sufs_setattr sa = { 0 };
	struct sufs_stat st;

	sufs_set_clock(fs, NOW_SEC + 60, 7);
	sa.mask = SUFS_SET_MODE | SUFS_SET_UID | SUFS_SET_GID | SUFS_SET_ATIME | SUFS_SET_MTIME;
	sa.mode = S_IFDIR | 04711;      /* only the permission bits are taken */
	sa.uid = 5;
	sa.gid = 6;
	sa.atime = 1000;
	sa.atime_ns = 1;
	sa.mtime = -2000;
	sa.mtime_ns = 999999999;
	assert_int_equal(sufs_setattr(fs, ino, &sa), 0);
	st = stat_(fs, ino);
	assert_int_equal(st.mode, S_IFREG | 04711);
	assert_int_equal(st.uid, 5);
	assert_int_equal(st.gid, 6);
	assert_int_equal(st.atime, 1000);
	assert_int_equal(st.atime_ns, 1);
	assert_int_equal(st.mtime, -2000);
	assert_int_equal(st.mtime_ns, 999999999);
	assert_int_equal(st.ctime, NOW_SEC + 60);
	assert_int_equal(st.ctime_ns, 7);
	assert_int_equal(st.crtime, NOW_SEC);

	sa.mask = SUFS_SET_CTIME;
	sa.ctime = 77;
	sa.ctime_ns = 0;
	assert_int_equal(sufs_setattr(fs, ino, &sa), 0);
	assert_int_equal(stat_(fs, ino).ctime, 77);
	assert_int_equal(stat_(fs, ino).uid, 5);
}

static void setattr_grows_a_file_with_a_hole_and_shrinks_it_again(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = create(fs, SUFS_ROOT_INO, "f");
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d");
	uint32_t l = symlink_(fs, SUFS_ROOT_INO, "l", "f");
	struct sufs_setattr sa = { .mask = SUFS_SET_SIZE, .size = 1 << 20 };
	uint8_t buf[16];
	size_t done;
	unsigned i;

	write_pattern(fs, ino, 0, 100, 3);
	assert_int_equal(sufs_setattr(fs, ino, &sa), 0);
	assert_int_equal(stat_(fs, ino).size, 1 << 20);
	assert_int_equal(stat_(fs, ino).blocks, 1);
	assert_int_equal(sufs_read(fs, ino, (1 << 20) - 16, buf, 16, &done), 0);
	assert_int_equal(done, 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(buf[i], 0);
	assert_pattern(fs, ino, 0, 100, 3);

	sa.size = 50;
	assert_int_equal(sufs_setattr(fs, ino, &sa), 0);
	assert_int_equal(stat_(fs, ino).size, 50);
	assert_pattern(fs, ino, 0, 50, 3);
	/* growing again shows zeros where the cut bytes were */
	sa.size = 100;
	assert_int_equal(sufs_setattr(fs, ino, &sa), 0);
	assert_int_equal(sufs_read(fs, ino, 50, buf, 16, &done), 0);
	for (i = 0; i < 16; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(sufs_setattr(fs, d, &sa), -EISDIR);
	assert_int_equal(sufs_setattr(fs, l, &sa), -EINVAL);
}

static void setattr_refuses_nanoseconds_of_a_whole_second_and_changes_nothing(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = create(fs, SUFS_ROOT_INO, "f");
	struct sufs_setattr sa = { .mask = SUFS_SET_UID | SUFS_SET_MTIME, .uid = 9,
				   .mtime = 5, .mtime_ns = 1000000000u };

	assert_int_equal(sufs_setattr(fs, ino, &sa), -EINVAL);
	assert_int_equal(stat_(fs, ino).uid, 1000);
	assert_int_equal(stat_(fs, ino).mtime, NOW_SEC);
}

static void stat_of_an_unused_or_impossible_inode_fails(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct sufs_stat st;

	assert_int_equal(sufs_stat(fs, 50, &st), -ENOENT);
	assert_int_equal(sufs_stat(fs, 0, &st), -EINVAL);
	assert_int_equal(sufs_stat(fs, sufs_get_super(fs)->inodes_count + 1, &st), -EINVAL);
}

/* ---- paths ---------------------------------------------------------------------- */

struct tree {
	uint32_t a, b, c, file, rel, abs, up, loop1, self;
};

/*
 * /a/b/c           a file
 * /a/rel -> b      relative symlink
 * /a/up -> ..      up to the root
 * /abs -> /a/b     absolute symlink
 * /file
 * /loop1 -> loop2, /loop2 -> loop1, /self -> self/x, /dangling -> /nope
 */
static void make_tree(struct sufs_fs *fs, struct tree *t)
{
	t->a = mkdir_(fs, SUFS_ROOT_INO, "a");
	t->b = mkdir_(fs, t->a, "b");
	t->c = create(fs, t->b, "c");
	t->rel = symlink_(fs, t->a, "rel", "b");
	t->up = symlink_(fs, t->a, "up", "..");
	t->abs = symlink_(fs, SUFS_ROOT_INO, "abs", "/a/b");
	t->file = create(fs, SUFS_ROOT_INO, "file");
	t->loop1 = symlink_(fs, SUFS_ROOT_INO, "loop1", "loop2");
	symlink_(fs, SUFS_ROOT_INO, "loop2", "loop1");
	t->self = symlink_(fs, SUFS_ROOT_INO, "self", "self/x");
	symlink_(fs, SUFS_ROOT_INO, "dangling", "/nope");
}

static void namei_resolves_absolute_relative_and_dotdot_paths(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct tree t;

	make_tree(fs, &t);
	assert_int_equal(resolve(fs, t.file, "/"), SUFS_ROOT_INO);
	assert_int_equal(resolve(fs, t.b, "/a/b/c"), t.c);
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, "a/b/c"), t.c);
	assert_int_equal(resolve(fs, t.a, "b/c"), t.c);
	assert_int_equal(resolve(fs, t.b, "c"), t.c);
	assert_int_equal(resolve(fs, t.b, "./c"), t.c);
	assert_int_equal(resolve(fs, t.b, "."), t.b);
	assert_int_equal(resolve(fs, t.b, ".."), t.a);
	assert_int_equal(resolve(fs, t.b, "../../a/./b/../b/c"), t.c);
	assert_int_equal(resolve(fs, t.b, "/a/b/.."), t.a);
	assert_int_equal(resolve(fs, t.b, "/.."), SUFS_ROOT_INO);
	assert_int_equal(resolve(fs, t.b, "/../../a"), t.a);
	assert_int_equal(resolve(fs, t.b, "//a///b/"), t.b);
}

static void namei_follows_symlinks_in_the_middle_and_at_the_end_only_when_asked(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct tree t;
	uint32_t ino;

	make_tree(fs, &t);
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, "/a/rel/c"), t.c);
	assert_int_equal(resolve(fs, t.a, "rel/c"), t.c);
	assert_int_equal(resolve(fs, t.b, "/abs/c"), t.c);
	assert_int_equal(resolve(fs, t.b, "/a/up/a/up/abs/../b/c"), t.c);
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, "/a/rel/"), t.b);

	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/abs", 0, &ino), 0);
	assert_int_equal(ino, t.abs);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/abs", 1, &ino), 0);
	assert_int_equal(ino, t.b);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/a/rel", 0, &ino), 0);
	assert_int_equal(ino, t.rel);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/a/up", 1, &ino), 0);
	assert_int_equal(ino, SUFS_ROOT_INO);
}

static void namei_reports_eloop_enotdir_and_enoent(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct tree t;
	uint32_t ino;
	char longname[SUFS_NAME_MAX + 3];

	make_tree(fs, &t);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/loop1", 1, &ino), -ELOOP);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/loop1/x", 0, &ino), -ELOOP);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/self", 1, &ino), -ELOOP);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/loop1", 0, &ino), 0);
	assert_int_equal(ino, t.loop1);

	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/file/x", 1, &ino), -ENOTDIR);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/a/b/c/d", 1, &ino), -ENOTDIR);
	assert_int_equal(namei(fs, t.file, "x", 1, &ino), -ENOTDIR);

	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/nope", 1, &ino), -ENOENT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/a/nope/c", 1, &ino), -ENOENT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/dangling", 1, &ino), -ENOENT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "", 1, &ino), -ENOENT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/dangling", 0, &ino), 0);

	memset(longname, 'n', sizeof(longname));
	longname[0] = '/';
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(namei(fs, SUFS_ROOT_INO, longname, 1, &ino), -ENAMETOOLONG);
}

/* n copies of "/." after head */
static char *dots(const char *head, size_t n, const char *tail)
{
	size_t hl = strlen(head), i;
	char *p = malloc(hl + 2 * n + strlen(tail) + 1);

	assert_non_null(p);
	memcpy(p, head, hl);
	for (i = 0; i < n; i++)
		memcpy(p + hl + 2 * i, "/.", 2);
	strcpy(p + hl + 2 * n, tail);
	return p;
}

/*
 * Each symlink's target goes in front of what is left of the path, in a
 * buffer of 2 * SUFS_PATH_MAX bytes: a path of 4094 bytes through a
 * symlink of 4094 bytes through a third fits while the last target is
 * shorter than 11 bytes, and is ENAMETOOLONG from there (with the NUL, 10
 * + 4090 + 4090 + 1 = 8191 bytes).
 */
static void namei_fails_with_enametoolong_when_symlinks_make_the_path_too_long(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d"), ino;
	char *t1a = dots("/s2a", 2045, ""), *t1b = dots("/s2b", 2045, "");
	char *pa = dots("/s1a", 2045, ""), *pb = dots("/s1b", 2045, "");

	assert_int_equal(strlen(t1a), 4094);
	assert_int_equal(strlen(pa), 4094);
	symlink_(fs, SUFS_ROOT_INO, "s1a", t1a);
	symlink_(fs, SUFS_ROOT_INO, "s1b", t1b);
	symlink_(fs, SUFS_ROOT_INO, "s2a", "/d/./././.");  /* 10 bytes */
	symlink_(fs, SUFS_ROOT_INO, "s2b", "/d/./././/."); /* 11 bytes */
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, pa), d);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, pb, 1, &ino), -ENAMETOOLONG);
	/* the same symlinks with less path after them resolve */
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, "/s1b/."), d);
	free(t1a);
	free(t1b);
	free(pa);
	free(pb);
}

/* Damage: entry `name` of dir's first block names inode ino (a raw write,
 * as sufs-debug -w makes one; entry: inode number, record length, name
 * length, type, name). */
static void point_entry(struct sufs_fs *fs, uint32_t dir, const char *name, uint32_t ino)
{
	uint32_t bs = sufs_get_super(fs)->block_size, off = 0;
	uint8_t *blk = malloc(bs);
	uint64_t pblk;

	assert_non_null(blk);
	assert_int_equal(sufs_bmap(fs, dir, 0, &pblk), 0);
	assert_int_equal(sufs_block_read(fs, pblk, blk), 0);
	while (blk[off + 6] != strlen(name) || memcmp(blk + off + 8, name, strlen(name))) {
		off += blk[off + 4] | (uint32_t)blk[off + 5] << 8;
		assert_true(off < bs - SUFS_DIR_TAIL_SIZE);
	}
	blk[off] = (uint8_t)ino;
	blk[off + 1] = (uint8_t)(ino >> 8);
	blk[off + 2] = (uint8_t)(ino >> 16);
	blk[off + 3] = (uint8_t)(ino >> 24);
	sufs_dirblock_seal(blk, bs, pblk);
	assert_int_equal(sufs_block_write(fs, pblk, blk), 0);
	free(blk);
}

/* Hostile metadata: an entry naming an inode the image cannot have, a
 * symlink of size 0, a directory with no links, a ".." that names its own
 * directory: the operations that meet them fail, as corrupt, and change
 * nothing. */
static void operations_on_damaged_metadata_fail_and_change_nothing(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d"), e = mkdir_(fs, SUFS_ROOT_INO, "e");
	uint32_t sub = mkdir_(fs, e, "sub"), m = mkdir_(fs, SUFS_ROOT_INO, "m"), ino;
	uint32_t s = symlink_(fs, SUFS_ROOT_INO, "s", "d");
	uint32_t impossible = sufs_get_super(fs)->inodes_count + 1;
	struct sufs_inode in;
	char target[16];
	size_t len;

	create(fs, d, "x");
	point_entry(fs, d, "x", impossible);
	assert_int_equal(sufs_lookup(fs, d, "x", 1, &ino), -SUFS_ECORRUPT);
	assert_int_equal(sufs_unlink(fs, d, "x", 1), -SUFS_ECORRUPT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/d/x", 1, &ino), -SUFS_ECORRUPT);
	assert_int_equal(sufs_rename(fs, d, "x", 1, d, "y", 1), -SUFS_ECORRUPT);
	assert_int_equal(sufs_lookup(fs, d, "y", 1, &ino), -ENOENT);
	/* and as the name a rename would replace */
	create(fs, d, "z");
	assert_int_equal(sufs_rename(fs, d, "z", 1, d, "x", 1), -SUFS_ECORRUPT);
	assert_int_equal(sufs_lookup(fs, d, "z", 1, &ino), 0);

	assert_int_equal(sufs_inode_get(fs, s, &in), 0);
	in.size = 0;
	assert_int_equal(sufs_inode_put(fs, s, &in), 0);
	assert_int_equal(sufs_readlink(fs, s, target, sizeof(target), &len), -SUFS_ECORRUPT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/s/x", 0, &ino), -SUFS_ECORRUPT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/s", 1, &ino), -SUFS_ECORRUPT);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/s", 0, &ino), 0);

	assert_int_equal(sufs_inode_get(fs, m, &in), 0);
	in.links = 0;
	assert_int_equal(sufs_inode_put(fs, m, &in), 0);
	assert_int_equal(sufs_create(fs, m, "n", 1, 0644, &user, &ino), -ENOENT);
	assert_int_equal(sufs_mkdir(fs, m, "n", 1, 0755, &user, &ino), -ENOENT);
	assert_int_equal(sufs_lookup(fs, m, "n", 1, &ino), -ENOENT);

	/* moving a directory checks that it does not go inside itself by
	 * walking up from where it goes: a ".." loop is corruption */
	point_entry(fs, sub, "..", sub);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "d", 1, sub, "d", 1), -SUFS_ECORRUPT);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "d"), d);
	assert_int_equal(sufs_lookup(fs, sub, "d", 1, &ino), -ENOENT);
	assert_int_equal(stat_(fs, sub).links, 2);
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 5); /* d, e and m */
	assert_int_equal(stat_(fs, e).links, 3);
}

static void namei_parent_splits_off_the_last_component(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct tree t;
	const char *name;
	const char *path;
	size_t len;
	uint32_t dir;

	make_tree(fs, &t);
	path = "/a/b/new";
	assert_int_equal(sufs_namei_parent(fs, SUFS_ROOT_INO, path, &dir, &name, &len), 0);
	assert_int_equal(dir, t.b);
	assert_ptr_equal(name, path + 5);
	assert_int_equal(len, 3);
	path = "/abs/new/";
	assert_int_equal(sufs_namei_parent(fs, SUFS_ROOT_INO, path, &dir, &name, &len), 0);
	assert_int_equal(dir, t.b);
	assert_int_equal(len, 3);
	assert_memory_equal(name, "new", 3);
	assert_int_equal(sufs_namei_parent(fs, t.a, "x", &dir, &name, &len), 0);
	assert_int_equal(dir, t.a);
	assert_int_equal(sufs_namei_parent(fs, t.a, "/x", &dir, &name, &len), 0);
	assert_int_equal(dir, SUFS_ROOT_INO);
	/* "/" is the root's "." (the operations then answer for the root) */
	assert_int_equal(sufs_namei_parent(fs, t.a, "//", &dir, &name, &len), 0);
	assert_int_equal(dir, SUFS_ROOT_INO);
	assert_int_equal(len, 1);
	assert_memory_equal(name, ".", 1);
	assert_int_equal(sufs_namei_parent(fs, SUFS_ROOT_INO, "/nope/x", &dir, &name, &len),
			 -ENOENT);
}

struct seen {
	char names[32][16];
	unsigned ftype[32];
	uint32_t ino[32];
	unsigned n;
};

static int seen_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct seen *s = arg;

	assert_true(s->n < 32 && len < 16);
	memcpy(s->names[s->n], name, len);
	s->names[s->n][len] = 0;
	s->ftype[s->n] = ftype;
	s->ino[s->n] = ino;
	s->n++;
	return 0;
}

static void readdir_lists_every_name_with_its_type_in_order(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct seen s = { .n = 0 };
	uint32_t f = create(fs, SUFS_ROOT_INO, "reg");
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "dir");
	uint32_t l = symlink_(fs, SUFS_ROOT_INO, "lnk", "reg");
	uint32_t n;
	static const char *names[] = { ".", "..", "reg", "dir", "lnk", "chr", "blk", "fifo", "sock" };
	static const unsigned types[] = { SUFS_FT_DIR, SUFS_FT_DIR, SUFS_FT_REG, SUFS_FT_DIR,
					  SUFS_FT_LNK, SUFS_FT_CHR, SUFS_FT_BLK, SUFS_FT_FIFO,
					  SUFS_FT_SOCK };
	unsigned i;

	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "chr", 3, S_IFCHR | 0600, 1, 3, NULL, &n), 0);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "blk", 3, S_IFBLK | 0600, 7, 0, NULL, &n), 0);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "fifo", 4, S_IFIFO | 0600, 0, 0, NULL, &n),
			 0);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "sock", 4, S_IFSOCK | 0600, 0, 0, NULL, &n),
			 0);
	assert_int_equal(sufs_readdir(fs, SUFS_ROOT_INO, seen_fn, &s), 0);
	assert_int_equal(s.n, 9);
	for (i = 0; i < 9; i++) {
		assert_string_equal(s.names[i], names[i]);
		assert_int_equal(s.ftype[i], types[i]);
	}
	assert_int_equal(s.ino[0], SUFS_ROOT_INO);
	assert_int_equal(s.ino[2], f);
	assert_int_equal(s.ino[3], d);
	assert_int_equal(s.ino[4], l);
	assert_int_equal(s.ino[8], n);
	assert_int_equal(sufs_readdir(fs, f, seen_fn, &s), -ENOTDIR);
}

/* ---- error codes ------------------------------------------------------------------- */

static void names_that_exist_fail_with_eexist_for_every_kind_of_node(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t f = create(fs, SUFS_ROOT_INO, "x"), ino;
	uint32_t free_inodes = sufs_get_super(fs)->free_inodes;

	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "x", 1, 0644, NULL, &ino), -EEXIST);
	assert_int_equal(sufs_mkdir(fs, SUFS_ROOT_INO, "x", 1, 0755, NULL, &ino), -EEXIST);
	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "x", 1, S_IFIFO, 0, 0, NULL, &ino), -EEXIST);
	assert_int_equal(sufs_symlink(fs, SUFS_ROOT_INO, "x", 1, "t", NULL, &ino), -EEXIST);
	assert_int_equal(sufs_link(fs, f, SUFS_ROOT_INO, "x", 1), -EEXIST);
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, ".", 1, 0644, NULL, &ino), -EEXIST);
	assert_int_equal(sufs_mkdir(fs, SUFS_ROOT_INO, "..", 2, 0755, NULL, &ino), -EEXIST);
	assert_int_equal(sufs_get_super(fs)->free_inodes, free_inodes);
	assert_int_equal(stat_(fs, f).links, 1);
}

static void making_a_name_inside_a_file_fails_with_enotdir(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t f = create(fs, SUFS_ROOT_INO, "f"), ino;
	uint32_t free_inodes = sufs_get_super(fs)->free_inodes;

	assert_int_equal(sufs_create(fs, f, "x", 1, 0644, NULL, &ino), -ENOTDIR);
	assert_int_equal(sufs_mkdir(fs, f, "x", 1, 0755, NULL, &ino), -ENOTDIR);
	assert_int_equal(sufs_symlink(fs, f, "x", 1, "t", NULL, &ino), -ENOTDIR);
	assert_int_equal(sufs_link(fs, f, f, "x", 1), -ENOTDIR);
	assert_int_equal(sufs_lookup(fs, f, "x", 1, &ino), -ENOTDIR);
	assert_int_equal(sufs_get_super(fs)->free_inodes, free_inodes);
}

static void writing_a_directory_fails_with_eisdir_and_a_special_file_with_einval(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d");
	uint32_t l = symlink_(fs, SUFS_ROOT_INO, "l", "d");
	uint32_t p;
	char buf[4];
	size_t done = 1;

	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "p", 1, S_IFIFO | 0600, 0, 0, NULL, &p), 0);
	assert_int_equal(sufs_write(fs, d, 0, "x", 1), -EISDIR);
	assert_int_equal(sufs_write(fs, l, 0, "x", 1), -EINVAL);
	assert_int_equal(sufs_write(fs, p, 0, "x", 1), -EINVAL);
	assert_int_equal(stat_(fs, d).size, 4096);
	assert_int_equal(stat_(fs, p).size, 0);
	/* nor is a special file read */
	assert_int_equal(sufs_read(fs, p, 0, buf, sizeof(buf), &done), -EINVAL);
	assert_int_equal(done, 0);
}

/*
 * A file whose single indirect pointer lies past the end of the image:
 * reading, writing and truncating through it fail as corrupt and change
 * nothing (not the size, not the bytes of the direct blocks, not the tail
 * of the last block a truncation would keep); a truncation that drops the
 * whole indirect tree goes through, and leaves only leaks behind.
 */
static void a_block_pointer_past_the_image_fails_reads_writes_and_truncates_as_corrupt(
	void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	uint32_t f = create(fs, SUFS_ROOT_INO, "f");
	uint64_t size = 14 * 4096, bad = sufs_get_super(fs)->blocks_count + 7;
	struct sufs_check_opts o = { .flags = SUFS_CHECK_NO | SUFS_CHECK_FORCE };
	struct sufs_check_result r;
	struct sufs_inode in;
	uint8_t buf[4096];
	size_t done;

	write_pattern(fs, f, 0, size, 3);
	assert_int_equal(sufs_inode_get(fs, f, &in), 0);
	assert_int_not_equal(in.block[SUFS_IND], 0);
	in.block[SUFS_IND] = bad;
	assert_int_equal(sufs_inode_put(fs, f, &in), 0);

	assert_int_equal(sufs_read(fs, f, 13 * 4096, buf, sizeof(buf), &done), -SUFS_ECORRUPT);
	assert_int_equal(sufs_write(fs, f, 12 * 4096 + 10, "x", 1), -SUFS_ECORRUPT);
	assert_int_equal(sufs_write(fs, f, 20 * 4096, "x", 1), -SUFS_ECORRUPT);
	assert_int_equal(sufs_truncate(fs, f, 13 * 4096 + 100), -SUFS_ECORRUPT);
	assert_int_equal(sufs_truncate(fs, f, 12 * 4096 + 100), -SUFS_ECORRUPT);
	assert_int_equal(stat_(fs, f).size, size);
	assert_pattern(fs, f, 0, 12 * 4096, 3);

	/* all of the indirect tree goes: the bad pointer with it */
	assert_int_equal(sufs_truncate(fs, f, 5000), 0);
	assert_int_equal(stat_(fs, f).size, 5000);
	assert_pattern(fs, f, 0, 5000, 3);
	assert_int_equal(sufs_inode_get(fs, f, &in), 0);
	assert_int_equal(in.block[SUFS_IND], 0);
	tu_close(t);
	assert_int_equal(sufs_check(t->path, &o, &r), 0);
	assert_int_equal(r.nonleaks, 0);
}

static void names_longer_than_255_bytes_fail_with_enametoolong(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t f = create(fs, SUFS_ROOT_INO, "f"), ino;
	char name[SUFS_NAME_MAX + 1];

	memset(name, 'q', sizeof(name));
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, name, sizeof(name), 0644, NULL, &ino),
			 -ENAMETOOLONG);
	assert_int_equal(sufs_mkdir(fs, SUFS_ROOT_INO, name, sizeof(name), 0755, NULL, &ino),
			 -ENAMETOOLONG);
	assert_int_equal(sufs_link(fs, f, SUFS_ROOT_INO, name, sizeof(name)), -ENAMETOOLONG);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, name, sizeof(name), &ino), -ENAMETOOLONG);
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, name, SUFS_NAME_MAX, 0644, NULL, &ino), 0);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "f"), f);
}

/*
 * SUFS_LINK_MAX is 65000; making that many names costs minutes (every new
 * name scans the directory), so the count is brought to the edge with
 * sufs_inode_put and the last steps are taken by the operations.
 */
static void a_link_count_at_link_max_fails_with_emlink(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t f = create(fs, SUFS_ROOT_INO, "f"), d = mkdir_(fs, SUFS_ROOT_INO, "d"), ino;
	uint32_t free_inodes;
	struct sufs_inode in;

	assert_int_equal(sufs_inode_get(fs, f, &in), 0);
	in.links = SUFS_LINK_MAX - 1;
	assert_int_equal(sufs_inode_put(fs, f, &in), 0);
	assert_int_equal(sufs_link(fs, f, SUFS_ROOT_INO, "g", 1), 0);
	assert_int_equal(stat_(fs, f).links, SUFS_LINK_MAX);
	assert_int_equal(sufs_link(fs, f, SUFS_ROOT_INO, "h", 1), -EMLINK);
	assert_int_equal(stat_(fs, f).links, SUFS_LINK_MAX);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "h", 1, &ino), -ENOENT);

	/* a directory full of subdirectories takes no more */
	assert_int_equal(sufs_inode_get(fs, d, &in), 0);
	in.links = SUFS_LINK_MAX - 1;
	assert_int_equal(sufs_inode_put(fs, d, &in), 0);
	mkdir_(fs, d, "last");
	assert_int_equal(stat_(fs, d).links, SUFS_LINK_MAX);
	free_inodes = sufs_get_super(fs)->free_inodes;
	assert_int_equal(sufs_mkdir(fs, d, "more", 4, 0755, NULL, &ino), -EMLINK);
	assert_int_equal(stat_(fs, d).links, SUFS_LINK_MAX);
	assert_int_equal(sufs_get_super(fs)->free_inodes, free_inodes);
	create(fs, d, "files-still-fit");
}

static void a_read_only_file_system_refuses_every_change_with_erofs(void **state)
{
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f"), ino;
	struct sufs_setattr sa = { .mask = SUFS_SET_UID, .uid = 1 };
	struct sufs_inode in;
	uint8_t blk[4096] = { 0 };
	struct seen s = { .n = 0 };

	write_pattern(t->fs, f, 0, 10, 4);
	tu_reopen(t, 0);
	assert_int_equal(sufs_create(t->fs, SUFS_ROOT_INO, "g", 1, 0644, NULL, &ino), -EROFS);
	assert_int_equal(sufs_mkdir(t->fs, SUFS_ROOT_INO, "g", 1, 0755, NULL, &ino), -EROFS);
	assert_int_equal(sufs_mknod(t->fs, SUFS_ROOT_INO, "g", 1, S_IFIFO, 0, 0, NULL, &ino),
			 -EROFS);
	assert_int_equal(sufs_symlink(t->fs, SUFS_ROOT_INO, "g", 1, "f", NULL, &ino), -EROFS);
	assert_int_equal(sufs_link(t->fs, f, SUFS_ROOT_INO, "g", 1), -EROFS);
	assert_int_equal(sufs_write(t->fs, f, 0, "x", 1), -EROFS);
	assert_int_equal(sufs_setattr(t->fs, f, &sa), -EROFS);
	assert_int_equal(sufs_inode_get(t->fs, f, &in), 0);
	assert_int_equal(sufs_inode_put(t->fs, f, &in), -EROFS);
	assert_int_equal(sufs_block_write(t->fs, 100, blk), -EROFS);
	assert_int_equal(sufs_sync(t->fs), 0);
	/* reading still works */
	assert_pattern(t->fs, f, 0, 10, 4);
	assert_int_equal(sufs_readdir(t->fs, SUFS_ROOT_INO, seen_fn, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(stat_(t->fs, f).uid, 1000);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "g", 1, &ino), -ENOENT);
}

/* ---- running out ---------------------------------------------------------------------- */

static void a_full_image_fails_writes_with_enospc_and_keeps_what_was_written(void **state)
{
	struct tfs *t = *state;
	uint32_t f, ino, free_inodes;
	uint8_t *buf = malloc(2u << 20);
	uint64_t size;

	assert_non_null(buf);
	remake_small(t, 1u << 20, 0);
	f = create(t->fs, SUFS_ROOT_INO, "big");
	tu_pattern_fill(buf, 2u << 20, 5, 0);
	assert_int_equal(sufs_write(t->fs, f, 0, buf, 2u << 20), -ENOSPC);
	free(buf);
	size = stat_(t->fs, f).size;
	assert_true(size > 900 * 1024);
	assert_true(size < 1u << 20);
	assert_int_equal(size % 1024, 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, 0);
	tu_assert_summaries(t->fs);
	assert_pattern(t->fs, f, 0, size, 5);

	/* nothing that needs a block can be made, and a failure leaks no inode */
	free_inodes = sufs_get_super(t->fs)->free_inodes;
	assert_int_equal(sufs_write(t->fs, f, size, "x", 1), -ENOSPC);
	assert_int_equal(stat_(t->fs, f).size, size);
	assert_int_equal(sufs_mkdir(t->fs, SUFS_ROOT_INO, "d", 1, 0755, NULL, &ino), -ENOSPC);
	assert_int_equal(sufs_symlink(t->fs, SUFS_ROOT_INO, "slow", 4,
				      "0123456789012345678901234567890123456789012345678901234567890"
				      "1234567890123456789012345678901234567890123456789012345678901",
				      NULL, &ino), -ENOSPC);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, free_inodes);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "d", 1, &ino), -ENOENT);
	tu_assert_summaries(t->fs);
	/* what needs no block still can be made */
	symlink_(t->fs, SUFS_ROOT_INO, "fast", "big");
	create(t->fs, SUFS_ROOT_INO, "empty");

	tu_reopen(t, 0);
	tu_assert_summaries(t->fs);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, 0);
	assert_int_equal(stat_(t->fs, f).size, size);
	assert_pattern(t->fs, f, 0, size, 5);
}

/* Fill a small image with one file, then give back blocks from its end
 * until exactly n are free. */
static uint32_t fill_leaving(struct tfs *t, uint64_t n)
{
	uint8_t blk[1024] = { 0 };
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "fill");
	uint64_t off = 0;

	blk[0] = 1;
	while (sufs_write(t->fs, f, off, blk, sizeof(blk)) == 0)
		off += sizeof(blk);
	assert_int_equal(sufs_sync(t->fs), 0);
	while (sufs_get_super(t->fs)->free_blocks < n) {
		off -= sizeof(blk);
		assert_int_equal(sufs_truncate(t->fs, f, off), 0);
		assert_int_equal(sufs_sync(t->fs), 0);
	}
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, n);
	return f;
}

static void a_write_that_cannot_have_its_indirect_blocks_and_data_allocates_nothing(void **state)
{
	struct tfs *t = *state;
	/* with 1 KiB blocks: single, double and triple indirect; the free
	 * blocks one fewer than the write needs (its data block and path) */
	static const struct { uint64_t off; uint64_t nfree; } c[] = {
		{ 50 << 10, 1 }, { 200 << 10, 2 }, { 17 << 20, 3 },
	};
	struct sufs_inode in;
	unsigned i, k;
	uint32_t e;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		remake_small(t, 1u << 20, 0);
		fill_leaving(t, c[i].nfree);
		e = create(t->fs, SUFS_ROOT_INO, "e");
		assert_int_equal(sufs_write(t->fs, e, c[i].off, "x", 1), -ENOSPC);
		assert_int_equal(sufs_get_super(t->fs)->free_blocks, c[i].nfree);
		assert_int_equal(sufs_inode_get(t->fs, e, &in), 0);
		assert_int_equal(in.size, 0);
		assert_int_equal(in.blocks, 0);
		for (k = 0; k < SUFS_NBLOCKS; k++)
			assert_int_equal(in.block[k], 0);
		tu_assert_summaries(t->fs);
		/* with one more block free it fits */
		assert_int_equal(sufs_truncate(t->fs, create(t->fs, SUFS_ROOT_INO, "g"), 0), 0);
	}
}

static void a_directory_that_cannot_grow_by_a_block_and_its_indirect_block_allocates_nothing(
	void **state)
{
	struct tfs *t = *state;
	struct sufs_inode in;
	uint32_t d, ino;
	char name[200];
	unsigned n = 0;
	int rc;

	remake_small(t, 1u << 20, 256);
	d = mkdir_(t->fs, SUFS_ROOT_INO, "d");
	/* twelve blocks of names: the next block needs the indirect one */
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (;;) {
		snprintf(name + 180, 20, "%04u", n);
		assert_int_equal(sufs_mknod(t->fs, d, name, strlen(name), S_IFIFO | 0644, 0, 0, NULL,
					    &ino), 0);
		n++;
		if (stat_(t->fs, d).size == 12 * 1024 && n % 5 == 0)
			break;
	}
	fill_leaving(t, 1);
	for (rc = 0; rc == 0; n++) {
		snprintf(name + 180, 20, "%04u", n);
		rc = sufs_mknod(t->fs, d, name, strlen(name), S_IFIFO | 0644, 0, 0, NULL, &ino);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, 1);
	assert_int_equal(sufs_inode_get(t->fs, d, &in), 0);
	assert_int_equal(in.size, 12 * 1024);
	assert_int_equal(in.block[SUFS_IND], 0);
	tu_assert_summaries(t->fs);
}

static void a_name_that_needs_a_new_directory_block_in_a_full_image_fails_cleanly(void **state)
{
	struct tfs *t = *state;
	uint32_t f, ino, free_inodes, made = 0;
	uint8_t blk[1024] = { 0 };
	uint64_t off = 0;
	char name[8];
	int rc;

	remake_small(t, 1u << 20, 128);
	f = create(t->fs, SUFS_ROOT_INO, "fill");
	while (sufs_write(t->fs, f, off, blk, sizeof(blk)) == 0)
		off += sizeof(blk);
	free_inodes = sufs_get_super(t->fs)->free_inodes;
	for (;;) {
		snprintf(name, sizeof(name), "f%03u", made);
		rc = sufs_create(t->fs, SUFS_ROOT_INO, name, strlen(name), 0644, NULL, &ino);
		if (rc)
			break;
		made++;
	}
	assert_int_equal(rc, -ENOSPC);
	/* 16-byte entries beside ".", ".." and "fill": (1016 - 48) / 16 */
	assert_int_equal(made, 60);
	/* the failed create's inode returns once its zeroing is on disk */
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, free_inodes - made);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).size, 1024);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, name, strlen(name), &ino), -ENOENT);
	tu_assert_summaries(t->fs);
	tu_reopen(t, 0);
	tu_assert_summaries(t->fs);
}

static void a_mkdir_that_fails_for_lack_of_blocks_leaves_the_parents_link_count_alone(void **state)
{
	struct tfs *t = *state;
	uint32_t f, d, ino;
	uint8_t blk[1024] = { 0 };
	uint64_t off = 0;

	remake_small(t, 1u << 20, 0);
	d = mkdir_(t->fs, SUFS_ROOT_INO, "parent");
	f = create(t->fs, SUFS_ROOT_INO, "fill");
	while (sufs_write(t->fs, f, off, blk, sizeof(blk)) == 0)
		off += sizeof(blk);
	assert_int_equal(sufs_mkdir(t->fs, d, "child", 5, 0755, NULL, &ino), -ENOSPC);
	assert_int_equal(stat_(t->fs, d).links, 2);
	assert_int_equal(sufs_mkdir(t->fs, SUFS_ROOT_INO, "child", 5, 0755, NULL, &ino), -ENOSPC);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, 3);
	tu_reopen(t, 0);
	assert_int_equal(stat_(t->fs, d).links, 2);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, 3);
}

/* A full check of the closed image finds nothing (then it is reopened). */
static void assert_checks_clean(struct tfs *t)
{
	struct sufs_check_opts o = { .flags = SUFS_CHECK_NO | SUFS_CHECK_FORCE };
	struct sufs_check_result r;

	tu_close(t);
	assert_int_equal(sufs_check(t->path, &o, &r), 0);
	assert_int_equal(r.problems, 0);
	assert_int_equal(r.status, SUFS_EXIT_OK);
	tu_reopen(t, SUFS_OPEN_RDWR);
}

/*
 * A link, or a mkdir that found a block for its own directory, whose new
 * name needs a block for the parent that the image no longer has: both
 * fail with ENOSPC and take back what they did first (the raised link
 * count of the file, of the parent; the new directory and its block).
 */
static void a_link_or_mkdir_whose_parent_cannot_grow_undoes_its_link_counts(void **state)
{
	struct tfs *t = *state;
	uint32_t fill, f0, ino, free_inodes, made = 0;
	uint8_t blk[1024] = { 0 };
	uint64_t off = 0, free_blocks;
	uint16_t root_links;
	char name[8];

	remake_small(t, 1u << 20, 128);
	fill = create(t->fs, SUFS_ROOT_INO, "fill");
	while (sufs_write(t->fs, fill, off, blk, sizeof(blk)) == 0)
		off += sizeof(blk);
	/* the root's one block full of names */
	for (;; made++) {
		snprintf(name, sizeof(name), "f%03u", made);
		if (sufs_create(t->fs, SUFS_ROOT_INO, name, strlen(name), 0644, NULL, &ino))
			break;
	}
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).size, 1024);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, 0);
	f0 = lookup(t->fs, SUFS_ROOT_INO, "f000");
	root_links = stat_(t->fs, SUFS_ROOT_INO).links;

	assert_int_equal(sufs_link(t->fs, f0, SUFS_ROOT_INO, "again", 5), -ENOSPC);
	assert_int_equal(stat_(t->fs, f0).links, 1);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "again", 5, &ino), -ENOENT);

	/* one block free: the new directory's, none for the root's growth */
	assert_int_equal(sufs_truncate(t->fs, fill, off - 1024), 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	free_blocks = sufs_get_super(t->fs)->free_blocks;
	assert_int_equal(free_blocks, 1);
	free_inodes = sufs_get_super(t->fs)->free_inodes;
	assert_int_equal(sufs_mkdir(t->fs, SUFS_ROOT_INO, "child", 5, 0755, NULL, &ino), -ENOSPC);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, root_links);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).size, 1024);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "child", 5, &ino), -ENOENT);
	/* the directory and its block come back once their freeing is on disk */
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free_blocks);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, free_inodes);
	tu_assert_summaries(t->fs);
	assert_checks_clean(t);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, root_links);
	assert_int_equal(stat_(t->fs, lookup(t->fs, SUFS_ROOT_INO, "f000")).links, 1);
	/* and with the block back, a file can be named: the root grows */
	assert_int_equal(sufs_link(t->fs, f0, SUFS_ROOT_INO, "again", 5), 0);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).size, 2048);
	assert_checks_clean(t);
}

static void running_out_of_inodes_fails_with_enospc_and_keeps_the_counts(void **state)
{
	struct tfs *t = *state;
	uint32_t ino, i, root_links;
	char name[8];

	remake_small(t, 1u << 20, 16);
	assert_int_equal(sufs_get_super(t->fs)->inodes_count, 16);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, 14);
	for (i = 0; i < 14; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		create(t->fs, SUFS_ROOT_INO, name);
	}
	root_links = stat_(t->fs, SUFS_ROOT_INO).links;
	assert_int_equal(sufs_create(t->fs, SUFS_ROOT_INO, "more", 4, 0644, NULL, &ino), -ENOSPC);
	assert_int_equal(sufs_mkdir(t->fs, SUFS_ROOT_INO, "dir", 3, 0755, NULL, &ino), -ENOSPC);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "more", 4, &ino), -ENOENT);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, root_links);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, 0);
	tu_assert_summaries(t->fs);
	/* a link needs no inode */
	assert_int_equal(sufs_link(t->fs, lookup(t->fs, SUFS_ROOT_INO, "f0"), SUFS_ROOT_INO,
				   "again", 5), 0);
	tu_reopen(t, 0);
	tu_assert_summaries(t->fs);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, 0);
}

static void a_create_that_fails_gives_back_its_inode_and_blocks(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t first, ino, d = mkdir_(fs, SUFS_ROOT_INO, "d");
	const struct sufs_super *sb = sufs_get_super(fs);
	uint64_t free_blocks;
	uint32_t free_inodes, links;
	struct sufs_group gd;
	uint32_t used_dirs;
	char target[200];
	int set;

	memset(target, 't', sizeof(target) - 1);
	target[sizeof(target) - 1] = 0;
	first = create(fs, d, "taken");
	free_blocks = sb->free_blocks;
	free_inodes = sb->free_inodes;
	links = stat_(fs, d).links;
	assert_int_equal(sufs_get_group(fs, 0, &gd), 0);
	used_dirs = gd.used_dirs;

	assert_int_equal(sufs_create(fs, d, "taken", 5, 0644, NULL, &ino), -EEXIST);
	assert_int_equal(sufs_mkdir(fs, d, "taken", 5, 0755, NULL, &ino), -EEXIST);
	assert_int_equal(sufs_symlink(fs, d, "taken", 5, target, NULL, &ino), -EEXIST);
	assert_int_equal(sb->free_blocks, free_blocks);
	assert_int_equal(sb->free_inodes, free_inodes);
	assert_int_equal(stat_(fs, d).links, links);
	assert_int_equal(sufs_get_group(fs, 0, &gd), 0);
	assert_int_equal(gd.used_dirs, used_dirs);
	tu_assert_summaries(fs);
	/* the number tried is free again and is the next one handed out */
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, first + 1, &set), 0);
	assert_int_equal(set, 0);
	assert_int_equal(sufs_stat(fs, first + 1, &(struct sufs_stat){ 0 }), -ENOENT);
	assert_int_equal(create(fs, d, "next"), first + 1);
}

/* ---- removing names, rename, truncate, fsync: in every write mode ------------------------ */

/*
 * The tests below run three times: in softdep, sync and async mode (set
 * right after opening, as a program would).  What they show holds in every
 * mode; only when blocks reach the disk differs.
 */
static unsigned mode_under_test;

static int setup_in(void **state, unsigned mode)
{
	struct tfs *t;

	if (setup(state))
		return -1;
	t = *state;
	mode_under_test = mode;
	return sufs_set_mode(t->fs, mode) ? -1 : 0;
}

static int setup_softdep(void **state)
{
	return setup_in(state, SUFS_MODE_SOFTDEP);
}

static int setup_sync(void **state)
{
	return setup_in(state, SUFS_MODE_SYNC);
}

static int setup_async(void **state)
{
	return setup_in(state, SUFS_MODE_ASYNC);
}

/* Close (everything written back) and open again for writing, same mode. */
static void reopen_rw(struct tfs *t)
{
	tu_reopen(t, SUFS_OPEN_RDWR);
	sufs_set_clock(t->fs, NOW_SEC, NOW_NSEC);
	assert_int_equal(sufs_set_mode(t->fs, mode_under_test), 0);
}

static void remake_small_in_mode(struct tfs *t, uint64_t bytes, uint32_t inodes)
{
	remake_small(t, bytes, inodes);
	assert_int_equal(sufs_set_mode(t->fs, mode_under_test), 0);
}

/* A crash: everything only in memory is lost; open the image read-only. */
static void crash(struct tfs *t)
{
	sufs_abandon(t->fs);
	t->fs = NULL;
	assert_int_equal(sufs_open(t->path, 0, &t->fs), 0);
}

static int gone(struct sufs_fs *fs, uint32_t dir, const char *name)
{
	uint32_t ino;

	return sufs_lookup(fs, dir, name, strlen(name), &ino) == -ENOENT;
}

static uint32_t used_dirs(struct sufs_fs *fs)
{
	struct sufs_group gd;

	assert_int_equal(sufs_get_group(fs, 0, &gd), 0);
	return gd.used_dirs;
}

static void assert_zeros(struct sufs_fs *fs, uint32_t ino, uint64_t off, size_t len)
{
	uint8_t *buf = malloc(len);
	size_t done = 0, i;

	assert_non_null(buf);
	assert_int_equal(sufs_read(fs, ino, off, buf, len, &done), 0);
	assert_int_equal(done, len);
	for (i = 0; i < len; i++)
		if (buf[i])
			fail_msg("inode %u: byte %llu is not zero", ino,
				 (unsigned long long)(off + i));
	free(buf);
}

static void unlink_removes_a_name_and_the_file_goes_with_its_last_one(void **state)
{
	struct tfs *t = *state;
	uint64_t free_blocks;
	uint32_t free_inodes, f;
	struct sufs_stat st;

	assert_int_equal(sufs_sync(t->fs), 0);
	free_blocks = sufs_get_super(t->fs)->free_blocks;
	free_inodes = sufs_get_super(t->fs)->free_inodes;
	f = create(t->fs, SUFS_ROOT_INO, "f");
	write_pattern(t->fs, f, 0, 100000, 1);         /* 25 blocks and an indirect one */
	write_pattern(t->fs, f, 5u << 20, 10, 2);      /* and a double indirect tree */
	assert_int_equal(stat_(t->fs, f).blocks, 29);
	assert_int_equal(sufs_link(t->fs, f, SUFS_ROOT_INO, "g", 1), 0);

	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "f", 1), 0);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "f"));
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "g"), f);
	assert_int_equal(stat_(t->fs, f).links, 1);
	assert_pattern(t->fs, f, 0, 100000, 1);

	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "g", 1), 0);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "g"));
	assert_int_equal(sufs_stat(t->fs, f, &st), -ENOENT);
	/* the name "f" is free for a new file */
	create(t->fs, SUFS_ROOT_INO, "f");
	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "f", 1), 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free_blocks);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, free_inodes);
	tu_assert_summaries(t->fs);

	tu_reopen(t, 0);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "f"));
	assert_true(gone(t->fs, SUFS_ROOT_INO, "g"));
	assert_int_equal(sufs_stat(t->fs, f, &st), -ENOENT);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free_blocks);
	tu_assert_summaries(t->fs);
}

static void unlink_reports_enoent_eisdir_enotdir_enametoolong_and_einval(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d"), f = create(fs, SUFS_ROOT_INO, "f");
	uint32_t r = mkdir_(fs, SUFS_ROOT_INO, "r");
	char name[SUFS_NAME_MAX + 1];

	memset(name, 'u', sizeof(name));
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "nope", 4), -ENOENT);
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "", 0), -ENOENT);
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "d", 1), -EISDIR);
	assert_int_equal(sufs_unlink(fs, d, ".", 1), -EISDIR);
	assert_int_equal(sufs_unlink(fs, d, "..", 2), -EISDIR);
	assert_int_equal(sufs_unlink(fs, f, "x", 1), -ENOTDIR);
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, name, sizeof(name)), -ENAMETOOLONG);
	assert_int_equal(sufs_unlink(fs, SUFS_ROOT_INO, "d/x", 3), -EINVAL);
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "r", 1), 0);
	assert_int_equal(sufs_unlink(fs, r, "x", 1), -ENOENT);   /* a removed directory */
	/* nothing changed */
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "d"), d);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "f"), f);
	assert_int_equal(stat_(fs, f).links, 1);
	assert_int_equal(stat_(fs, d).links, 2);
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 3);
}

static void rmdir_removes_an_empty_directory_and_the_parent_loses_a_link_at_once(void **state)
{
	struct tfs *t = *state;
	uint32_t free_inodes, dirs, a, b, ino;
	uint64_t free_blocks;
	struct sufs_stat st;
	struct seen s = { .n = 0 };

	assert_int_equal(sufs_sync(t->fs), 0);
	free_blocks = sufs_get_super(t->fs)->free_blocks;
	free_inodes = sufs_get_super(t->fs)->free_inodes;
	dirs = used_dirs(t->fs);
	a = mkdir_(t->fs, SUFS_ROOT_INO, "a");
	b = mkdir_(t->fs, a, "b");
	assert_int_equal(stat_(t->fs, a).links, 3);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, 3);

	assert_int_equal(sufs_rmdir(t->fs, a, "b", 1), 0);
	assert_int_equal(stat_(t->fs, a).links, 2);
	assert_true(gone(t->fs, a, "b"));
	assert_int_equal(sufs_stat(t->fs, b, &st), -ENOENT);
	assert_int_equal(sufs_create(t->fs, b, "x", 1, 0644, NULL, &ino), -ENOENT);
	assert_int_equal(sufs_rmdir(t->fs, SUFS_ROOT_INO, "a", 1), 0);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, 2);
	assert_int_equal(sufs_readdir(t->fs, SUFS_ROOT_INO, seen_fn, &s), 0);
	assert_int_equal(s.n, 2);

	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free_blocks);
	assert_int_equal(sufs_get_super(t->fs)->free_inodes, free_inodes);
	assert_int_equal(used_dirs(t->fs), dirs);
	tu_assert_summaries(t->fs);
	tu_reopen(t, 0);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, 2);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "a"));
	assert_int_equal(used_dirs(t->fs), dirs);
	tu_assert_summaries(t->fs);
}

/* The offset of the live entry `name` in a raw directory block, or -1. */
static long entry_at(const uint8_t *blk, uint32_t bsize, const char *name)
{
	uint32_t off = 0, len = (uint32_t)strlen(name), reclen;

	while (off + 8 <= bsize - SUFS_DIR_TAIL_SIZE) {
		const uint8_t *de = blk + off;

		reclen = (uint32_t)de[4] | (uint32_t)de[5] << 8;
		if ((de[0] | de[1] | de[2] | de[3]) && de[6] == len && !memcmp(de + 8, name, len))
			return off;
		if (reclen < 8)
			return -1;
		off += reclen;
	}
	return -1;
}

static void rmdir_reports_enotempty_enotdir_einval_and_ebusy_for_the_root(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d"), g = create(fs, SUFS_ROOT_INO, "g"), e;
	uint8_t blk[4096];
	char name[SUFS_NAME_MAX + 1];
	uint64_t pblk;
	long off;

	create(fs, d, "f");
	e = mkdir_(fs, d, "e");
	memset(name, 'r', sizeof(name));
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "d", 1), -ENOTEMPTY);
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "g", 1), -ENOTDIR);
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "nope", 4), -ENOENT);
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "", 0), -ENOENT);
	assert_int_equal(sufs_rmdir(fs, g, "x", 1), -ENOTDIR);
	assert_int_equal(sufs_rmdir(fs, e, ".", 1), -EINVAL);
	assert_int_equal(sufs_rmdir(fs, e, "..", 2), -ENOTEMPTY);
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, ".", 1), -EBUSY); /* "/": the root */
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "..", 2), -ENOTEMPTY);
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, name, sizeof(name)), -ENAMETOOLONG);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "d"), d);
	assert_int_equal(lookup(fs, d, "e"), e);
	assert_int_equal(stat_(fs, d).links, 3);
	assert_int_equal(stat_(fs, e).links, 2);
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 3);

	/*
	 * The root has no name of its own to remove ("/" is its ".",
	 * refused above, as is its ".."), so make a name for it
	 * by hand: an entry in e that names inode 2, as a damaged image could
	 * hold.  rmdir through it is refused with EBUSY.
	 */
	create(fs, e, "r");
	assert_int_equal(sufs_sync(fs), 0);
	assert_int_equal(sufs_bmap(fs, e, 0, &pblk), 0);
	assert_int_equal(sufs_block_read(fs, pblk, blk), 0);
	off = entry_at(blk, sizeof(blk), "r");
	assert_true(off > 0);
	blk[off] = SUFS_ROOT_INO;
	blk[off + 1] = blk[off + 2] = blk[off + 3] = 0;
	blk[off + 7] = SUFS_FT_DIR;
	assert_int_equal(sufs_block_write(fs, pblk, blk), 0);
	assert_int_equal(lookup(fs, e, "r"), SUFS_ROOT_INO);
	assert_int_equal(sufs_rmdir(fs, e, "r", 1), -EBUSY);
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 3);
	assert_int_equal(lookup(fs, e, "r"), SUFS_ROOT_INO);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "."), SUFS_ROOT_INO);
}

static void rename_in_one_directory_moves_the_name_and_frees_the_old_one(void **state)
{
	struct tfs *t = *state;
	uint32_t f, f2, ino;

	f = create(t->fs, SUFS_ROOT_INO, "f");
	write_pattern(t->fs, f, 0, 10, 3);
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, "g", 1), 0);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "g"), f);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "f"));
	assert_int_equal(stat_(t->fs, f).links, 1);
	assert_pattern(t->fs, f, 0, 10, 3);
	/* the new name is taken, the old one free */
	assert_int_equal(sufs_create(t->fs, SUFS_ROOT_INO, "g", 1, 0644, NULL, &ino), -EEXIST);
	f2 = create(t->fs, SUFS_ROOT_INO, "f");
	assert_int_not_equal(f2, f);

	reopen_rw(t);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "g"), f);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "f"), f2);
	assert_int_equal(stat_(t->fs, f).links, 1);
	assert_pattern(t->fs, f, 0, 10, 3);
}

static void rename_across_directories_moves_files_and_directories_with_their_dotdot(
	void **state)
{
	struct tfs *t = *state;
	uint32_t a, b, d, f, x;
	int round;

	a = mkdir_(t->fs, SUFS_ROOT_INO, "a");
	b = mkdir_(t->fs, SUFS_ROOT_INO, "b");
	f = create(t->fs, a, "f");
	write_pattern(t->fs, f, 0, 5000, 4);
	d = mkdir_(t->fs, a, "d");
	x = create(t->fs, d, "x");
	assert_int_equal(stat_(t->fs, a).links, 3);

	assert_int_equal(sufs_rename(t->fs, a, "f", 1, b, "f2", 2), 0);
	assert_int_equal(lookup(t->fs, b, "f2"), f);
	assert_true(gone(t->fs, a, "f"));
	assert_int_equal(stat_(t->fs, f).links, 1);

	assert_int_equal(sufs_rename(t->fs, a, "d", 1, b, "d", 1), 0);
	assert_int_equal(lookup(t->fs, d, ".."), b);
	assert_int_equal(stat_(t->fs, a).links, 2);
	assert_int_equal(stat_(t->fs, b).links, 3);
	assert_int_equal(stat_(t->fs, d).links, 2);
	assert_int_equal(resolve(t->fs, SUFS_ROOT_INO, "/b/d/x"), x);
	assert_true(gone(t->fs, a, "d"));

	/* in the same directory: ".." and the link counts stay */
	assert_int_equal(sufs_rename(t->fs, b, "d", 1, b, "e", 1), 0);
	assert_int_equal(lookup(t->fs, d, ".."), b);
	assert_int_equal(stat_(t->fs, b).links, 3);

	/* up to the root */
	assert_int_equal(sufs_rename(t->fs, b, "e", 1, SUFS_ROOT_INO, "e", 1), 0);
	for (round = 0; round < 2; round++) {
		assert_int_equal(lookup(t->fs, d, ".."), SUFS_ROOT_INO);
		assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, 5);
		assert_int_equal(stat_(t->fs, a).links, 2);
		assert_int_equal(stat_(t->fs, b).links, 2);
		assert_int_equal(stat_(t->fs, d).links, 2);
		assert_int_equal(resolve(t->fs, SUFS_ROOT_INO, "/e/x"), x);
		assert_int_equal(resolve(t->fs, SUFS_ROOT_INO, "/b/f2"), f);
		assert_pattern(t->fs, f, 0, 5000, 4);
		assert_true(gone(t->fs, b, "e"));
		reopen_rw(t);
	}
}

static void rename_over_a_name_replaces_it_and_frees_what_lost_its_last_name(void **state)
{
	struct tfs *t = *state;
	uint32_t free_inodes, dirs, f, g, h, d1, d2, p, q, px, qx, root_links;
	struct sufs_stat st;
	int round;

	assert_int_equal(sufs_sync(t->fs), 0);
	free_inodes = sufs_get_super(t->fs)->free_inodes;
	dirs = used_dirs(t->fs);
	f = create(t->fs, SUFS_ROOT_INO, "f");
	write_pattern(t->fs, f, 0, 3000, 5);
	g = create(t->fs, SUFS_ROOT_INO, "g");
	assert_int_equal(sufs_link(t->fs, g, SUFS_ROOT_INO, "g2", 2), 0);
	h = create(t->fs, SUFS_ROOT_INO, "h");

	/* over a file with another name: it keeps that one */
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, "g", 1), 0);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "g"), f);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "g2"), g);
	assert_int_equal(stat_(t->fs, g).links, 1);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "f"));
	/* over a file's last name: it goes */
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "g2", 2, SUFS_ROOT_INO, "h", 1), 0);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "h"), g);
	assert_int_equal(sufs_stat(t->fs, h, &st), -ENOENT);

	/* a directory over an empty one, in one parent: the parent loses the
	 * replaced one's ".." link */
	d1 = mkdir_(t->fs, SUFS_ROOT_INO, "d1");
	d2 = mkdir_(t->fs, SUFS_ROOT_INO, "d2");
	root_links = stat_(t->fs, SUFS_ROOT_INO).links;
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "d1", 2, SUFS_ROOT_INO, "d2", 2), 0);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "d2"), d1);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "d1"));
	assert_int_equal(sufs_stat(t->fs, d2, &st), -ENOENT);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, root_links - 1);

	/* across parents: the old parent loses a link, the new one keeps its count */
	p = mkdir_(t->fs, SUFS_ROOT_INO, "p");
	q = mkdir_(t->fs, SUFS_ROOT_INO, "q");
	px = mkdir_(t->fs, p, "x");
	qx = mkdir_(t->fs, q, "x");
	assert_int_equal(sufs_rename(t->fs, p, "x", 1, q, "x", 1), 0);
	assert_int_equal(lookup(t->fs, q, "x"), px);
	assert_int_equal(lookup(t->fs, px, ".."), q);
	assert_int_equal(sufs_stat(t->fs, qx, &st), -ENOENT);

	/* what lost its last name is free once written back: h, d2, qx */
	assert_int_equal(sufs_sync(t->fs), 0);
	for (round = 0; round < 2; round++) {
		assert_int_equal(sufs_get_super(t->fs)->free_inodes, free_inodes - 6);
		assert_int_equal(used_dirs(t->fs), dirs + 4);
		tu_assert_summaries(t->fs);
		assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "g"), f);
		assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "h"), g);
		assert_pattern(t->fs, f, 0, 3000, 5);
		assert_int_equal(stat_(t->fs, f).links, 1);
		assert_int_equal(stat_(t->fs, g).links, 1);
		assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "d2"), d1);
		assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, root_links + 1);
		assert_int_equal(stat_(t->fs, p).links, 2);
		assert_int_equal(stat_(t->fs, q).links, 3);
		assert_int_equal(stat_(t->fs, px).links, 2);
		assert_int_equal(lookup(t->fs, px, ".."), q);
		reopen_rw(t);
	}
}

static void rename_onto_another_name_of_the_same_file_does_nothing(void **state)
{
	struct tfs *t = *state;
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f"), d = mkdir_(t->fs, SUFS_ROOT_INO, "d");
	int round;

	assert_int_equal(sufs_link(t->fs, f, d, "h", 1), 0);
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "f", 1, d, "h", 1), 0);
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, "f", 1), 0);
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "d", 1, SUFS_ROOT_INO, "d", 1), 0);
	for (round = 0; round < 2; round++) {
		assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "f"), f);
		assert_int_equal(lookup(t->fs, d, "h"), f);
		assert_int_equal(stat_(t->fs, f).links, 2);
		assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "d"), d);
		assert_int_equal(stat_(t->fs, d).links, 2);
		assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).links, 3);
		reopen_rw(t);
	}
}

static void rename_refuses_to_move_a_directory_into_itself_or_to_move_dot_names(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d"), e = mkdir_(fs, d, "e");
	uint32_t f = create(fs, SUFS_ROOT_INO, "f");

	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "d", 1, d, "x", 1), -EINVAL);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "d", 1, e, "x", 1), -EINVAL);
	assert_int_equal(sufs_rename(fs, d, "e", 1, e, "x", 1), -EINVAL);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, ".", 1, SUFS_ROOT_INO, "x", 1), -EBUSY);
	assert_int_equal(sufs_rename(fs, d, ".", 1, SUFS_ROOT_INO, "x", 1), -EINVAL);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "..", 2, SUFS_ROOT_INO, "x", 1), -EINVAL);
	assert_int_equal(sufs_rename(fs, d, "..", 2, e, "x", 1), -EINVAL);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, ".", 1), -EBUSY);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, d, ".", 1), -EINVAL);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, d, "..", 2), -EINVAL);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, d, "a/b", 3), -EINVAL);
	/* nothing moved */
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "d"), d);
	assert_int_equal(lookup(fs, d, "e"), e);
	assert_int_equal(lookup(fs, e, ".."), d);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "f"), f);
	assert_true(gone(fs, d, "x"));
	assert_true(gone(fs, e, "x"));
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 3);
	assert_int_equal(stat_(fs, d).links, 3);
	assert_int_equal(stat_(fs, e).links, 2);
	assert_int_equal(stat_(fs, f).links, 1);
}

static void rename_reports_enoent_enotdir_eisdir_enotempty_and_enametoolong(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t a = mkdir_(fs, SUFS_ROOT_INO, "a"), full = mkdir_(fs, SUFS_ROOT_INO, "full");
	uint32_t m = mkdir_(fs, SUFS_ROOT_INO, "m"), r = mkdir_(fs, SUFS_ROOT_INO, "r");
	uint32_t f = create(fs, SUFS_ROOT_INO, "f"), g = create(fs, SUFS_ROOT_INO, "g");
	char name[SUFS_NAME_MAX + 1];

	create(fs, full, "x");
	assert_int_equal(sufs_rmdir(fs, SUFS_ROOT_INO, "r", 1), 0);
	memset(name, 'n', sizeof(name));
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "nope", 4, SUFS_ROOT_INO, "x", 1), -ENOENT);
	assert_int_equal(sufs_rename(fs, a, "f", 1, SUFS_ROOT_INO, "x", 1), -ENOENT);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "", 0, SUFS_ROOT_INO, "x", 1), -ENOENT);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, "", 0), -ENOENT);
	assert_int_equal(sufs_rename(fs, r, "x", 1, SUFS_ROOT_INO, "y", 1), -ENOENT);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, r, "y", 1), -ENOENT);
	assert_int_equal(sufs_rename(fs, f, "x", 1, SUFS_ROOT_INO, "y", 1), -ENOTDIR);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, g, "y", 1), -ENOTDIR);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "m", 1, SUFS_ROOT_INO, "f", 1), -ENOTDIR);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, "m", 1), -EISDIR);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "m", 1, SUFS_ROOT_INO, "full", 4),
			 -ENOTEMPTY);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "a", 1, full, "..", 2), -EINVAL);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, name, sizeof(name), SUFS_ROOT_INO, "x", 1),
			 -ENAMETOOLONG);
	assert_int_equal(sufs_rename(fs, SUFS_ROOT_INO, "f", 1, SUFS_ROOT_INO, name, sizeof(name)),
			 -ENAMETOOLONG);
	/* nothing changed */
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "f"), f);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "g"), g);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "m"), m);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "full"), full);
	assert_true(gone(fs, SUFS_ROOT_INO, "x"));
	assert_true(gone(fs, SUFS_ROOT_INO, "y"));
	assert_int_equal(stat_(fs, f).links, 1);
	assert_int_equal(stat_(fs, m).links, 2);
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 5);
}

static void rename_into_a_directory_at_link_max_fails_with_emlink_unless_it_replaces(
	void **state)
{
	struct tfs *t = *state;
	uint32_t full = mkdir_(t->fs, SUFS_ROOT_INO, "full"), m = mkdir_(t->fs, SUFS_ROOT_INO, "m");
	uint32_t f = create(t->fs, SUFS_ROOT_INO, "f");
	struct sufs_inode in;
	int round;

	assert_int_equal(sufs_inode_get(t->fs, full, &in), 0);
	in.links = SUFS_LINK_MAX - 1;
	assert_int_equal(sufs_inode_put(t->fs, full, &in), 0);
	mkdir_(t->fs, full, "slot");
	assert_int_equal(stat_(t->fs, full).links, SUFS_LINK_MAX);

	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "m", 1, full, "m", 1), -EMLINK);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "m"), m);
	assert_true(gone(t->fs, full, "m"));
	assert_int_equal(stat_(t->fs, full).links, SUFS_LINK_MAX);
	assert_int_equal(stat_(t->fs, m).links, 2);
	/* over an empty directory the count does not grow: allowed */
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "m", 1, full, "slot", 4), 0);
	/* and files do not count */
	assert_int_equal(sufs_rename(t->fs, SUFS_ROOT_INO, "f", 1, full, "f", 1), 0);
	for (round = 0; round < 2; round++) {
		assert_int_equal(stat_(t->fs, full).links, SUFS_LINK_MAX);
		assert_int_equal(lookup(t->fs, full, "slot"), m);
		assert_int_equal(lookup(t->fs, m, ".."), full);
		assert_int_equal(lookup(t->fs, full, "f"), f);
		assert_true(gone(t->fs, SUFS_ROOT_INO, "m"));
		reopen_rw(t);
	}
}

static void rename_that_needs_a_block_in_a_full_image_fails_with_enospc_and_changes_nothing(
	void **state)
{
	struct tfs *t = *state;
	uint32_t d, src, other, ino, made = 0;
	uint8_t blk[1024] = { 0 };
	uint64_t off = 0;
	char name[8];
	int rc;

	remake_small_in_mode(t, 1u << 20, 128);
	d = mkdir_(t->fs, SUFS_ROOT_INO, "d");
	src = create(t->fs, d, "src");
	other = create(t->fs, d, "other");
	create(t->fs, SUFS_ROOT_INO, "fill");
	ino = lookup(t->fs, SUFS_ROOT_INO, "fill");
	while (sufs_write(t->fs, ino, off, blk, sizeof(blk)) == 0)
		off += sizeof(blk);
	/* the root's only block full of names, and no block for another */
	for (;;) {
		snprintf(name, sizeof(name), "f%03u", made);
		rc = sufs_create(t->fs, SUFS_ROOT_INO, name, strlen(name), 0644, NULL, &ino);
		if (rc)
			break;
		made++;
	}
	assert_int_equal(rc, -ENOSPC);
	assert_true(made > 10);

	assert_int_equal(sufs_rename(t->fs, d, "src", 3, SUFS_ROOT_INO, "a-longer-new-name", 17), -ENOSPC);
	assert_int_equal(lookup(t->fs, d, "src"), src);
	assert_int_equal(stat_(t->fs, src).links, 1);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "a-longer-new-name"));
	/* what needs no block still works: within d, and over a name */
	assert_int_equal(sufs_rename(t->fs, d, "src", 3, d, "moved", 5), 0);
	assert_int_equal(sufs_rename(t->fs, d, "moved", 5, SUFS_ROOT_INO, "f000", 4), 0);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "f000"), src);
	assert_int_equal(stat_(t->fs, src).links, 1);
	/* removing gives the blocks back: then the new name fits */
	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "fill", 4), 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_rename(t->fs, d, "other", 5, SUFS_ROOT_INO, "a-longer-new-name", 17), 0);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "a-longer-new-name"), other);
	assert_int_equal(stat_(t->fs, SUFS_ROOT_INO).size, 2048);
	assert_int_equal(sufs_sync(t->fs), 0);
	tu_assert_summaries(t->fs);
	tu_reopen(t, 0);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "a-longer-new-name"), other);
	assert_int_equal(lookup(t->fs, SUFS_ROOT_INO, "f000"), src);
	assert_true(gone(t->fs, d, "src"));
	tu_assert_summaries(t->fs);
}

/*
 * 1 KiB blocks, 128 pointers per indirect block: logical blocks 0-11 are
 * direct, 12-139 single, 140-16523 double, from 16524 on triple indirect.
 * The file: blocks 0-19 (20 data + 1 indirect), block 200 (data, double
 * indirect and one of its children), block 17000 (data, triple indirect
 * and two below it): 28 blocks.
 */
static void truncate_shrinks_and_grows_through_double_and_triple_indirect_trees(void **state)
{
	struct tfs *t = *state;
	struct {
		uint64_t size, blocks;
	} steps[] = {
		{ 17000 * 1024 + 10, 28 }, /* within the last block: its tail zeroed */
		{ 150 * 1024 + 7, 23 },    /* the triple tree goes, and block 200 */
		{ 13 * 1024 + 5, 15 },     /* the double tree, blocks 14-19 */
		{ 5000, 5 },               /* blocks 5-11, the single tree */
		{ 0, 0 },
	};
	uint64_t free0, size;
	uint32_t f;
	unsigned i;
	struct sufs_stat st;

	remake_small_in_mode(t, 16u << 20, 0);
	f = create(t->fs, SUFS_ROOT_INO, "f");
	assert_int_equal(sufs_sync(t->fs), 0);
	free0 = sufs_get_super(t->fs)->free_blocks;
	write_pattern(t->fs, f, 0, 20 * 1024, 5);
	write_pattern(t->fs, f, 200 * 1024, 1024, 6);
	write_pattern(t->fs, f, 17000 * 1024, 1024, 7);
	st = stat_(t->fs, f);
	assert_int_equal(st.size, 17001 * 1024);
	assert_int_equal(st.blocks, 28);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0 - 28);

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size = steps[i].size;
		assert_int_equal(sufs_truncate(t->fs, f, size), 0);
		st = stat_(t->fs, f);
		assert_int_equal(st.size, size);
		assert_int_equal(st.blocks, steps[i].blocks);
		assert_int_equal(sufs_sync(t->fs), 0);
		assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0 - steps[i].blocks);
		tu_assert_summaries(t->fs);
		assert_pattern(t->fs, f, 0, size < 20 * 1024 ? size : 20 * 1024, 5);
		if (size > 200 * 1024)
			assert_pattern(t->fs, f, 200 * 1024, 1024, 6);
		if (size > 17000 * 1024)
			assert_pattern(t->fs, f, 17000 * 1024, 10, 7);
		else if (size > 20 * 1024)
			assert_zeros(t->fs, f, 20 * 1024, size - 20 * 1024);
		if (size == 5000) {
			/* growing shows zeros where the cut bytes were, no blocks */
			assert_int_equal(sufs_truncate(t->fs, f, 6000), 0);
			assert_zeros(t->fs, f, 5000, 1000);
			assert_int_equal(stat_(t->fs, f).blocks, 5);
		}
	}

	/* grow: a hole, no blocks */
	assert_int_equal(sufs_truncate(t->fs, f, 300000), 0);
	assert_int_equal(stat_(t->fs, f).blocks, 0);
	assert_zeros(t->fs, f, 0, 300000);
	/* the triple tree grows again */
	write_pattern(t->fs, f, 17000 * 1024, 100, 8);
	assert_int_equal(stat_(t->fs, f).blocks, 4);
	reopen_rw(t);
	st = stat_(t->fs, f);
	assert_int_equal(st.size, 17000 * 1024 + 100);
	assert_int_equal(st.blocks, 4);
	assert_zeros(t->fs, f, 0, 300000);
	assert_pattern(t->fs, f, 17000 * 1024, 100, 8);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0 - 4);
	tu_assert_summaries(t->fs);
}

static void truncate_reports_eisdir_einval_efbig_and_enoent(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d"), l = symlink_(fs, SUFS_ROOT_INO, "l", "d");
	uint32_t f = create(fs, SUFS_ROOT_INO, "f"), p;

	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "p", 1, S_IFIFO | 0600, 0, 0, NULL, &p), 0);
	write_pattern(fs, f, 0, 100, 9);
	assert_int_equal(sufs_truncate(fs, d, 10), -EISDIR);
	assert_int_equal(sufs_truncate(fs, l, 10), -EINVAL);
	assert_int_equal(sufs_truncate(fs, p, 10), -EINVAL);
	assert_int_equal(sufs_truncate(fs, f, (uint64_t)1 << 62), -EFBIG);
	assert_int_equal(sufs_truncate(fs, 100, 0), -ENOENT);
	assert_int_equal(sufs_truncate(fs, 0, 0), -EINVAL);
	assert_int_equal(stat_(fs, d).size, 4096);
	assert_int_equal(stat_(fs, l).size, 1);
	assert_int_equal(stat_(fs, f).size, 100);
	assert_pattern(fs, f, 0, 100, 9);
}

/* ---- files held open, holes punched ------------------------------------------------ */

/* A full check of the closed image: its problems, each a leak or not. */
static void check_image(struct tfs *t, unsigned flags, struct sufs_check_result *r)
{
	struct sufs_check_opts o = { .flags = flags | SUFS_CHECK_FORCE };

	memset(r, 0, sizeof(*r));
	assert_int_equal(sufs_check(t->path, &o, r), 0);
}

static void a_file_held_open_keeps_its_blocks_after_its_last_name_goes(void **state)
{
	struct tfs *t = *state;
	uint64_t free0;
	uint32_t f;
	struct sufs_stat st;

	remake_small_in_mode(t, 4u << 20, 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	free0 = sufs_get_super(t->fs)->free_blocks;
	f = create(t->fs, SUFS_ROOT_INO, "f");
	write_pattern(t->fs, f, 0, 30 * 1024, 3);
	assert_int_equal(sufs_hold(t->fs, f), 0);
	assert_int_equal(sufs_hold(t->fs, f), 0);
	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "f", 1), 0);
	assert_true(gone(t->fs, SUFS_ROOT_INO, "f"));
	assert_int_equal(sufs_sync(t->fs), 0);
	/* no name, no link, and everything still there: read, written */
	st = stat_(t->fs, f);
	assert_int_equal(st.links, 0);
	assert_int_equal(st.size, 30 * 1024);
	assert_pattern(t->fs, f, 0, 30 * 1024, 3);
	write_pattern(t->fs, f, 30 * 1024, 2048, 4);
	assert_pattern(t->fs, f, 30 * 1024, 2048, 4);
	assert_int_equal(sufs_link(t->fs, f, SUFS_ROOT_INO, "again", 5), -ENOENT);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_true(sufs_get_super(t->fs)->free_blocks < free0 - 30);
	/* the first release keeps it, the last frees it all */
	assert_int_equal(sufs_release(t->fs, f), 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(stat_(t->fs, f).links, 0);
	assert_int_equal(sufs_release(t->fs, f), 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0);
	tu_assert_summaries(t->fs);
	assert_int_equal(sufs_release(t->fs, f), -EINVAL);
	assert_int_equal(sufs_hold(t->fs, f), -ENOENT);
}

static void a_file_held_open_and_named_stays_as_it_is(void **state)
{
	struct tfs *t = *state;
	struct sufs_check_result r;
	uint32_t f;

	f = create(t->fs, SUFS_ROOT_INO, "f");
	write_pattern(t->fs, f, 0, 5000, 1);
	assert_int_equal(sufs_hold(t->fs, f), 0);
	assert_int_equal(sufs_release(t->fs, f), 0);
	assert_int_equal(stat_(t->fs, f).links, 1);
	assert_pattern(t->fs, f, 0, 5000, 1);
	/* a name, then a hold that close releases */
	assert_int_equal(sufs_hold(t->fs, f), 0);
	tu_close(t);
	check_image(t, SUFS_CHECK_NO, &r);
	assert_int_equal(r.problems, 0);
}

static void close_frees_the_files_held_that_no_name_reaches(void **state)
{
	struct tfs *t = *state;
	struct sufs_check_result r;
	uint64_t free0;
	uint32_t f;

	remake_small_in_mode(t, 4u << 20, 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	free0 = sufs_get_super(t->fs)->free_blocks;
	f = create(t->fs, SUFS_ROOT_INO, "f");
	write_pattern(t->fs, f, 0, 20 * 1024, 2);
	assert_int_equal(sufs_hold(t->fs, f), 0);
	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "f", 1), 0);
	tu_reopen(t, SUFS_OPEN_RDWR);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0);
	assert_int_equal(sufs_stat(t->fs, f, &(struct sufs_stat){ 0 }), -ENOENT);
	tu_close(t);
	check_image(t, SUFS_CHECK_NO, &r);
	assert_int_equal(r.problems, 0);
}

static void a_crash_with_a_file_held_and_unlinked_leaves_a_leak(void **state)
{
	struct tfs *t = *state;
	struct sufs_check_result r;
	uint32_t f;

	f = create(t->fs, SUFS_ROOT_INO, "f");
	write_pattern(t->fs, f, 0, 20000, 2);
	assert_int_equal(sufs_hold(t->fs, f), 0);
	assert_int_equal(sufs_unlink(t->fs, SUFS_ROOT_INO, "f", 1), 0);
	assert_int_equal(sufs_sync(t->fs), 0);
	crash(t);
	assert_int_equal(stat_(t->fs, f).links, 0);
	tu_close(t);
	check_image(t, SUFS_CHECK_NO, &r);
	assert_true(r.problems > 0);
	assert_int_equal(r.nonleaks, 0);
	check_image(t, SUFS_CHECK_LEAKS_ONLY | SUFS_CHECK_YES, &r);
	check_image(t, SUFS_CHECK_NO, &r);
	assert_int_equal(r.problems, 0);
}

static void punch_frees_the_blocks_of_a_range_and_zeroes_its_edges(void **state)
{
	struct tfs *t = *state;
	struct sufs_check_result r;
	uint64_t free0;
	uint8_t buf[1024];
	uint32_t f;
	size_t done;
	struct sufs_stat st;

	remake_small_in_mode(t, 4u << 20, 0);
	f = create(t->fs, SUFS_ROOT_INO, "f");
	assert_int_equal(sufs_sync(t->fs), 0);
	free0 = sufs_get_super(t->fs)->free_blocks;
	/* 40 blocks of 1 KiB: 12 direct, 28 under the single indirect block */
	write_pattern(t->fs, f, 0, 40 * 1024, 8);
	assert_int_equal(stat_(t->fs, f).blocks, 41);
	/* from the middle of block 5 to the middle of block 30: blocks 6-29 go */
	assert_int_equal(sufs_punch(t->fs, f, 5 * 1024 + 100, 25 * 1024), 0);
	st = stat_(t->fs, f);
	assert_int_equal(st.size, 40 * 1024);
	assert_int_equal(st.blocks, 41 - 24);
	assert_pattern(t->fs, f, 0, 5 * 1024 + 100, 8);
	assert_pattern(t->fs, f, 30 * 1024 + 100, 10 * 1024 - 100, 8);
	for (uint64_t off = 5 * 1024 + 100; off < 30 * 1024 + 100; off += done) {
		size_t want = 30 * 1024 + 100 - off < sizeof(buf) ? 30 * 1024 + 100 - off : sizeof(buf);
		assert_int_equal(sufs_read(t->fs, f, off, buf, want, &done), 0);
		assert_int_equal(done, want);
		for (size_t i = 0; i < done; i++)
			if (buf[i])
				fail_msg("byte %llu is not zero", (unsigned long long)(off + i));
	}
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0 - 17);
	tu_assert_summaries(t->fs);
	/* the rest, to the end: every data block but the first five; the
	 * indirect block stays, emptied (its range reaches past the hole), as
	 * a truncate leaves one */
	assert_int_equal(sufs_punch(t->fs, f, 5 * 1024, UINT64_MAX), 0);
	assert_int_equal(stat_(t->fs, f).blocks, 6);
	assert_int_equal(stat_(t->fs, f).size, 40 * 1024);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0 - 6);
	tu_close(t);
	check_image(t, SUFS_CHECK_NO, &r);
	assert_int_equal(r.problems, 0);
}

static void punch_before_an_indirect_tree_leaves_the_tree_and_its_data(void **state)
{
	struct tfs *t = *state;
	struct sufs_check_result r;
	uint64_t free0;
	uint32_t f;

	remake_small_in_mode(t, 4u << 20, 0);
	f = create(t->fs, SUFS_ROOT_INO, "f");
	assert_int_equal(sufs_sync(t->fs), 0);
	free0 = sufs_get_super(t->fs)->free_blocks;
	/* 300 blocks of 1 KiB: 12 direct, 128 under the single indirect
	 * block, 160 under the double one (its top block and two below) */
	write_pattern(t->fs, f, 0, 300 * 1024, 11);
	assert_int_equal(stat_(t->fs, f).blocks, 304);
	/* direct blocks 2-5 only: both trees, which start after, stay whole */
	assert_int_equal(sufs_punch(t->fs, f, 2 * 1024, 4 * 1024), 0);
	assert_int_equal(stat_(t->fs, f).blocks, 300);
	/* blocks 20-29, inside the single tree: the double tree stays */
	assert_int_equal(sufs_punch(t->fs, f, 20 * 1024, 10 * 1024), 0);
	assert_int_equal(stat_(t->fs, f).blocks, 290);
	assert_pattern(t->fs, f, 0, 2 * 1024, 11);
	assert_zeros(t->fs, f, 2 * 1024, 4 * 1024);
	assert_pattern(t->fs, f, 6 * 1024, 14 * 1024, 11);
	assert_zeros(t->fs, f, 20 * 1024, 10 * 1024);
	assert_pattern(t->fs, f, 30 * 1024, 270 * 1024, 11);
	assert_int_equal(sufs_sync(t->fs), 0);
	assert_int_equal(sufs_get_super(t->fs)->free_blocks, free0 - 290);
	tu_assert_summaries(t->fs);
	tu_close(t);
	check_image(t, SUFS_CHECK_NO, &r);
	assert_int_equal(r.problems, 0);
}

static void punch_changes_nothing_past_the_end_and_refuses_what_is_not_a_file(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t d = mkdir_(fs, SUFS_ROOT_INO, "d"), f = create(fs, SUFS_ROOT_INO, "f"), p;

	assert_int_equal(sufs_mknod(fs, SUFS_ROOT_INO, "p", 1, S_IFIFO | 0600, 0, 0, NULL, &p), 0);
	write_pattern(fs, f, 0, 5000, 9);
	assert_int_equal(sufs_punch(fs, f, 5000, 100000), 0);
	assert_int_equal(sufs_punch(fs, f, 100, 0), 0);
	assert_int_equal(stat_(fs, f).size, 5000);
	assert_pattern(fs, f, 0, 5000, 9);
	/* within one block */
	assert_int_equal(sufs_punch(fs, f, 10, 20), 0);
	assert_pattern(fs, f, 0, 10, 9);
	assert_pattern(fs, f, 30, 4970, 9);
	assert_int_equal(sufs_punch(fs, d, 0, 10), -EISDIR);
	assert_int_equal(sufs_punch(fs, p, 0, 10), -EINVAL);
	assert_int_equal(sufs_punch(fs, 100, 0, 10), -ENOENT);
}

static void fsync_makes_a_file_durable_across_a_crash(void **state)
{
	struct tfs *t = *state;
	uint32_t d, f;
	uint8_t want[50000];
	uint8_t got[50000];
	size_t done;

	d = mkdir_(t->fs, SUFS_ROOT_INO, "d");
	f = create(t->fs, d, "f");
	write_pattern(t->fs, f, 0, sizeof(want), 12);
	assert_int_equal(sufs_fsync(t->fs, f), 0);
	write_pattern(t->fs, f, 100, 10, 13);          /* an overwrite: data only */
	assert_int_equal(sufs_fsync(t->fs, f), 0);
	assert_int_equal(sufs_fsync(t->fs, 0), -EINVAL);
	assert_int_equal(sufs_fsync(t->fs, 100), -ENOENT);

	crash(t);
	assert_int_equal(resolve(t->fs, SUFS_ROOT_INO, "/d/f"), f);
	assert_int_equal(stat_(t->fs, f).size, sizeof(want));
	assert_int_equal(stat_(t->fs, d).links, 2);
	tu_pattern_fill(want, sizeof(want), 12, 0);
	tu_pattern_fill(want + 100, 10, 13, 100);
	assert_int_equal(sufs_read(t->fs, f, 0, got, sizeof(got), &done), 0);
	assert_int_equal(done, sizeof(got));
	assert_memory_equal(got, want, sizeof(want));
	assert_int_equal(sufs_fsync(t->fs, f), 0);     /* read-only: nothing to do */
}

static void fsync_of_a_directory_makes_the_names_in_it_durable(void **state)
{
	struct tfs *t = *state;
	uint32_t d, g, h, l;
	struct sufs_stat st;

	d = mkdir_(t->fs, SUFS_ROOT_INO, "d");
	g = create(t->fs, d, "g");
	h = mkdir_(t->fs, d, "h");
	l = symlink_(t->fs, d, "l", "g");
	assert_int_equal(sufs_fsync(t->fs, d), 0);

	crash(t);
	assert_int_equal(resolve(t->fs, SUFS_ROOT_INO, "/d/g"), g);
	assert_int_equal(resolve(t->fs, SUFS_ROOT_INO, "/d/h"), h);
	assert_int_equal(lookup(t->fs, h, ".."), d);
	assert_int_equal(namei(t->fs, SUFS_ROOT_INO, "/d/l", 0, &g), 0);
	assert_int_equal(g, l);
	assert_readlink(t->fs, l, "g");
	st = stat_(t->fs, d);
	assert_int_equal(st.links, 3);
	assert_int_equal(st.mode, S_IFDIR | 0755);
}

/* ---- persistence ------------------------------------------------------------------------ */

static void everything_made_survives_close_and_reopen(void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	uint32_t a, b, big, small, slow, fast, dev, ino;
	char slow_target[300];
	struct sufs_stat st;
	struct seen s = { .n = 0 };

	memset(slow_target, 's', sizeof(slow_target) - 1);
	slow_target[sizeof(slow_target) - 1] = 0;
	a = mkdir_(fs, SUFS_ROOT_INO, "a");
	b = mkdir_(fs, a, "b");
	big = create(fs, b, "big");
	write_pattern(fs, big, 0, 300000, 9);          /* direct and single indirect */
	write_pattern(fs, big, 10u << 20, 5000, 10);   /* far out, double indirect */
	small = create(fs, a, "small");
	write_pattern(fs, small, 0, 3, 11);
	assert_int_equal(sufs_link(fs, small, SUFS_ROOT_INO, "hard", 4), 0);
	slow = symlink_(fs, a, "slow", slow_target);
	fast = symlink_(fs, SUFS_ROOT_INO, "fast", "a/b/big");
	assert_int_equal(sufs_mknod(fs, b, "null", 4, S_IFCHR | 0666, 1, 3, &user, &dev), 0);
	tu_reopen(t, 0);
	fs = t->fs;

	assert_int_equal(sufs_get_super(fs)->state & SUFS_STATE_CLEAN, SUFS_STATE_CLEAN);
	tu_assert_summaries(fs);
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, "/a/b/big"), big);
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, "/fast"), big);
	st = stat_(fs, big);
	assert_int_equal(st.size, (10u << 20) + 5000);
	assert_int_equal(st.uid, 1000);
	assert_pattern(fs, big, 0, 300000, 9);
	assert_pattern(fs, big, 10u << 20, 5000, 10);
	assert_int_equal(resolve(fs, SUFS_ROOT_INO, "/hard"), small);
	assert_int_equal(stat_(fs, small).links, 2);
	assert_pattern(fs, small, 0, 3, 11);
	assert_int_equal(namei(fs, b, "../slow", 0, &ino), 0);
	assert_int_equal(ino, slow);
	assert_readlink(fs, slow, slow_target);
	assert_readlink(fs, fast, "a/b/big");
	st = stat_(fs, dev);
	assert_int_equal(st.mode, S_IFCHR | 0666);
	assert_int_equal(st.rdev_major, 1);
	assert_int_equal(st.rdev_minor, 3);
	assert_int_equal(stat_(fs, a).links, 3);
	assert_int_equal(stat_(fs, SUFS_ROOT_INO).links, 3);
	assert_int_equal(sufs_readdir(fs, b, seen_fn, &s), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.names[2], "big");
	assert_string_equal(s.names[3], "null");
	assert_int_equal(s.ftype[3], SUFS_FT_CHR);
	assert_int_equal(namei(fs, SUFS_ROOT_INO, "/a/b/null", 1, &ino), 0);
	assert_int_equal(ino, dev);
}

static void a_backup_superblock_opens_the_same_file_system(void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs;
	struct sufs_dev *dev;
	struct sufs_super sb;
	uint64_t off;
	uint32_t f;

	remake_small(t, 16u << 20, 0);
	sb = *sufs_get_super(t->fs);
	assert_int_equal(sb.groups_count, 2);
	f = create(t->fs, SUFS_ROOT_INO, "f");
	tu_close(t);

	assert_int_equal(sufs_backup_offset(&sb, 0, &off), 0);
	assert_int_equal(off, 8192 * 1024);
	assert_int_equal(sufs_dev_open(t->path, 0, &dev), 0);
	assert_int_equal(sufs_open_dev(dev, 0, off, &fs), 0);
	assert_int_equal(sufs_get_super(fs)->sb_group, 1);
	assert_memory_equal(sufs_get_super(fs)->uuid, sb.uuid, 16);
	assert_int_equal(sufs_get_super(fs)->blocks_count, sb.blocks_count);
	assert_int_equal(lookup(fs, SUFS_ROOT_INO, "f"), f);
	assert_int_equal(sufs_close(fs), 0);
}

/* An image that ends before the superblock would is too short, not one
 * with a bad magic number; one that holds zeros there has a bad magic. */
static void an_image_too_short_for_a_superblock_says_so(void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs;

	tu_close(t);
	assert_int_equal(truncate(t->path, SUFS_SB_OFFSET + SUFS_SB_SIZE - 1), 0);
	assert_int_equal(sufs_open(t->path, 0, &fs), -SUFS_ESHORT);
	assert_non_null(strstr(sufs_strerror(-SUFS_ESHORT), "too small"));
	assert_int_equal(truncate(t->path, 0), 0);
	assert_int_equal(sufs_open(t->path, 0, &fs), -SUFS_ESHORT);
	assert_int_equal(truncate(t->path, SUFS_SB_OFFSET + SUFS_SB_SIZE), 0);
	assert_int_equal(sufs_open(t->path, 0, &fs), -SUFS_EMAGIC);
}

static void an_image_whose_mkfs_never_closed_does_not_open(void **state)
{
	struct tfs *t = *state;
	struct sufs_mkfs_opts o;
	struct sufs_dev *dev;
	struct sufs_fs *fs;

	/* over an image that was complete: its old superblocks must go */
	tu_close(t);
	tu_default_opts(&o, 4096);
	assert_int_equal(sufs_dev_open(t->path, SUFS_DEV_RDWR, &dev), 0);
	assert_int_equal(sufs_mkfs(dev, &o, &fs), 0);
	create(fs, SUFS_ROOT_INO, "f");
	assert_int_equal(sufs_sync(fs), 0);
	sufs_abandon(fs);
	assert_int_equal(sufs_open(t->path, 0, &fs), -SUFS_EMAGIC);
}

/* Make an image at path with a fixed clock and the same operations each time. */
static void build_image(const char *path, int64_t when)
{
	struct sufs_mkfs_opts o;
	struct sufs_dev *dev;
	struct sufs_fs *fs;
	uint32_t d, f, ino;
	struct sufs_setattr sa = { .mask = SUFS_SET_MODE, .mode = 0600 };

	assert_int_equal(truncate(path, 8u << 20), 0);
	tu_default_opts(&o, 4096);
	o.time_sec = when;
	snprintf(o.label, sizeof(o.label), "repro");
	assert_int_equal(sufs_dev_open(path, SUFS_DEV_RDWR, &dev), 0);
	assert_int_equal(sufs_mkfs(dev, &o, &fs), 0);
	d = mkdir_(fs, SUFS_ROOT_INO, "dir");
	f = create(fs, d, "file");
	write_pattern(fs, f, 0, 70000, 1);
	symlink_(fs, d, "link", "file");
	assert_int_equal(sufs_close(fs), 0);

	/* a later session that must not stamp the real time anywhere */
	assert_int_equal(sufs_open(path, SUFS_OPEN_RDWR | SUFS_OPEN_NOFLAGS, &fs), 0);
	sufs_set_clock(fs, when + 10, 0);
	d = lookup(fs, SUFS_ROOT_INO, "dir");
	f = lookup(fs, d, "file");
	assert_int_equal(sufs_setattr(fs, f, &sa), 0);
	write_pattern(fs, f, 100000, 10, 2);
	assert_int_equal(sufs_mkdir(fs, SUFS_ROOT_INO, "later", 5, 0700, NULL, &ino), 0);
	assert_int_equal(sufs_close(fs), 0);
}

static int same_bytes(const char *p, const char *q)
{
	FILE *a = fopen(p, "rb"), *b = fopen(q, "rb");
	int ca, cb, same = 1;

	assert_non_null(a);
	assert_non_null(b);
	do {
		ca = getc(a);
		cb = getc(b);
		if (ca != cb)
			same = 0;
	} while (same && ca != EOF);
	fclose(a);
	fclose(b);
	return same;
}

static void the_same_operations_with_a_fixed_clock_give_byte_identical_images(void **state)
{
	char *p = tu_temp_path("repro1"), *q = tu_temp_path("repro2"), *r = tu_temp_path("repro3");

	(void)state;
	build_image(p, TU_TIME_SEC);
	build_image(q, TU_TIME_SEC);
	build_image(r, TU_TIME_SEC + 1);
	assert_true(same_bytes(p, q));
	assert_false(same_bytes(p, r));     /* the comparison can tell */
	unlink(p);
	unlink(q);
	unlink(r);
	free(p);
	free(q);
	free(r);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, tu_teardown)
/* the test in each write mode */
#define IN_MODES(f) \
	{ #f " [softdep]", f, setup_softdep, tu_teardown, NULL }, \
	{ #f " [sync]", f, setup_sync, tu_teardown, NULL }, \
	{ #f " [async]", f, setup_async, tu_teardown, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(create_makes_an_empty_file_with_mode_owner_and_the_current_time),
		T(create_without_credentials_belongs_to_root_and_keeps_special_bits),
		T(mkdir_makes_dot_and_dotdot_and_raises_the_parents_link_count),
		T(mknod_keeps_device_numbers_and_makes_fifos_and_sockets),
		T(a_symlink_of_up_to_120_bytes_lives_in_its_inode),
		T(a_longer_symlink_keeps_its_target_in_one_block),
		T(link_adds_a_name_and_raises_the_link_count),
		T(written_bytes_read_back_across_blocks_and_holes),
		T(a_write_of_nothing_changes_nothing),
		T(setattr_changes_what_its_mask_names_and_the_change_time),
		T(setattr_grows_a_file_with_a_hole_and_shrinks_it_again),
		T(setattr_refuses_nanoseconds_of_a_whole_second_and_changes_nothing),
		T(stat_of_an_unused_or_impossible_inode_fails),
		T(namei_resolves_absolute_relative_and_dotdot_paths),
		T(namei_follows_symlinks_in_the_middle_and_at_the_end_only_when_asked),
		T(namei_reports_eloop_enotdir_and_enoent),
		T(namei_fails_with_enametoolong_when_symlinks_make_the_path_too_long),
		T(operations_on_damaged_metadata_fail_and_change_nothing),
		T(namei_parent_splits_off_the_last_component),
		T(readdir_lists_every_name_with_its_type_in_order),
		T(names_that_exist_fail_with_eexist_for_every_kind_of_node),
		T(making_a_name_inside_a_file_fails_with_enotdir),
		T(writing_a_directory_fails_with_eisdir_and_a_special_file_with_einval),
		T(a_block_pointer_past_the_image_fails_reads_writes_and_truncates_as_corrupt),
		T(names_longer_than_255_bytes_fail_with_enametoolong),
		T(a_link_count_at_link_max_fails_with_emlink),
		T(a_read_only_file_system_refuses_every_change_with_erofs),
		T(a_full_image_fails_writes_with_enospc_and_keeps_what_was_written),
		T(a_write_that_cannot_have_its_indirect_blocks_and_data_allocates_nothing),
		T(a_directory_that_cannot_grow_by_a_block_and_its_indirect_block_allocates_nothing),
		T(a_name_that_needs_a_new_directory_block_in_a_full_image_fails_cleanly),
		T(a_mkdir_that_fails_for_lack_of_blocks_leaves_the_parents_link_count_alone),
		T(a_link_or_mkdir_whose_parent_cannot_grow_undoes_its_link_counts),
		T(running_out_of_inodes_fails_with_enospc_and_keeps_the_counts),
		T(a_create_that_fails_gives_back_its_inode_and_blocks),
		T(everything_made_survives_close_and_reopen),
		T(a_backup_superblock_opens_the_same_file_system),
		T(an_image_too_short_for_a_superblock_says_so),
		T(an_image_whose_mkfs_never_closed_does_not_open),
		cmocka_unit_test(the_same_operations_with_a_fixed_clock_give_byte_identical_images),
		IN_MODES(unlink_removes_a_name_and_the_file_goes_with_its_last_one),
		IN_MODES(unlink_reports_enoent_eisdir_enotdir_enametoolong_and_einval),
		IN_MODES(rmdir_removes_an_empty_directory_and_the_parent_loses_a_link_at_once),
		IN_MODES(rmdir_reports_enotempty_enotdir_einval_and_ebusy_for_the_root),
		IN_MODES(rename_in_one_directory_moves_the_name_and_frees_the_old_one),
		IN_MODES(rename_across_directories_moves_files_and_directories_with_their_dotdot),
		IN_MODES(rename_over_a_name_replaces_it_and_frees_what_lost_its_last_name),
		IN_MODES(rename_onto_another_name_of_the_same_file_does_nothing),
		IN_MODES(rename_refuses_to_move_a_directory_into_itself_or_to_move_dot_names),
		IN_MODES(rename_reports_enoent_enotdir_eisdir_enotempty_and_enametoolong),
		IN_MODES(rename_into_a_directory_at_link_max_fails_with_emlink_unless_it_replaces),
		IN_MODES(rename_that_needs_a_block_in_a_full_image_fails_with_enospc_and_changes_nothing),
		IN_MODES(truncate_shrinks_and_grows_through_double_and_triple_indirect_trees),
		IN_MODES(truncate_reports_eisdir_einval_efbig_and_enoent),
		IN_MODES(a_file_held_open_keeps_its_blocks_after_its_last_name_goes),
		IN_MODES(a_file_held_open_and_named_stays_as_it_is),
		IN_MODES(close_frees_the_files_held_that_no_name_reaches),
		IN_MODES(punch_frees_the_blocks_of_a_range_and_zeroes_its_edges),
		IN_MODES(punch_changes_nothing_past_the_end_and_refuses_what_is_not_a_file),
		IN_MODES(punch_before_an_indirect_tree_leaves_the_tree_and_its_data),
		T(a_crash_with_a_file_held_and_unlinked_leaves_a_leak),
		IN_MODES(fsync_makes_a_file_durable_across_a_crash),
		IN_MODES(fsync_of_a_directory_makes_the_names_in_it_durable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
