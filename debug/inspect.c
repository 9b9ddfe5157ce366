/*
 * inspect.c - sufs-debug's commands that look at raw blocks and bitmaps,
 * as debugfs has them: block_dump, inode_dump, dirsearch, imap, testb,
 * testi, ffb, ffi.
 *
 * They read through the library's cache, so they show the newest bytes:
 * what is in memory, pending updates included.  block_dump -d reads the
 * device instead, to compare with what the disk holds.
 */
#include "config.h"

#include "commands.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int inspect_usage(const char *cmd)
{
	const struct command *c = command_find(cmd);
	return fail(cmd, NULL, "usage: %s%s%s", c->name, *c->args ? " " : "", c->args);
}

/* A block number of the image; 0 or 1 after a message. */
static int parse_block(struct session *s, const char *cmd, const char *arg, uint64_t *blk)
{
	uint64_t n = sufs_get_super(s->fs)->blocks_count;

	if (parse_u64(arg, blk) || *blk >= n)
		return fail(cmd, arg, "not a block number (the image has 0 to %llu)",
			    (unsigned long long)n - 1);
	return 0;
}

/* "0010  00 01 02 ...  0f  |................|", a run of equal lines as
 * "*"; the offsets shown start at base. */
static void hex_dump(const uint8_t *p, uint32_t len, uint32_t base)
{
	uint32_t off, i;
	int starred = 0;

	for (off = 0; off < len; off += 16) {
		if (off && off + 16 <= len && memcmp(p + off, p + off - 16, 16) == 0) {
			if (!starred)
				puts("*");
			starred = 1;
			continue;
		}
		starred = 0;
		printf("%04x ", base + off);
		for (i = 0; i < 16; i++)
			printf("%s%02x", i == 8 ? "  " : " ", p[off + i]);
		fputs("  |", stdout);
		for (i = 0; i < 16; i++)
			putchar(p[off + i] >= 0x20 && p[off + i] < 0x7f ? p[off + i] : '.');
		puts("|");
	}
	printf("%04x\n", base + len);
}

/* block_dump [-d] BLOCK | block_dump [-d] -f PATH LBLK */
int cmd_block_dump(struct session *s, int argc, char **argv)
{
	uint32_t bsize = sufs_get_super(s->fs)->block_size;
	const char *path = NULL;
	uint64_t blk, lblk;
	uint8_t *buf;
	int i, disk = 0, rc;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-d") == 0)
			disk = 1;
		else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc)
			path = argv[++i];
		else
			return inspect_usage(argv[0]);
	}
	if (i != argc - 1)
		return inspect_usage(argv[0]);
	if (path) {
		uint32_t ino;
		if (resolve(s, argv[0], path, 1, &ino))
			return 1;
		if (parse_u64(argv[i], &lblk))
			return fail(argv[0], argv[i], "not a logical block number");
		rc = sufs_bmap(s->fs, ino, lblk, &blk);
		if (rc)
			return fail(argv[0], path, "%s", sufs_strerror(rc));
		if (blk == 0)
			return fail(argv[0], path, "logical block %llu is a hole",
				    (unsigned long long)lblk);
	} else if (parse_block(s, argv[0], argv[i], &blk)) {
		return 1;
	}
	buf = malloc(bsize);
	if (!buf)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	if (disk)
		rc = sufs_dev_read(sufs_get_dev(s->fs), blk * bsize, buf, bsize);
	else
		rc = sufs_block_read(s->fs, blk, buf);
	if (rc) {
		free(buf);
		return fail(argv[0], argv[i], "%s", sufs_strerror(rc));
	}
	hex_dump(buf, bsize, 0);
	free(buf);
	return 0;
}

/* The block and the byte in it where inode ino lies. */
static void inode_place(const struct sufs_super *sb, uint32_t ino, uint64_t *blk, uint32_t *off)
{
	struct sufs_group_layout l;
	uint32_t ipb = sb->block_size / SUFS_INODE_SIZE;
	uint32_t index = (ino - 1) % sb->inodes_per_group;

	sufs_group_layout(sb, (ino - 1) / sb->inodes_per_group, &l);
	*blk = l.inode_table + index / ipb;
	*off = index % ipb * SUFS_INODE_SIZE;
}

/* inode_dump [-b] PATH: the inode's bytes as in memory (-b: its block
 * pointers only, bytes 96 to 215, or a fast symlink's target) */
int cmd_inode_dump(struct session *s, int argc, char **argv)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	uint32_t ino, off, from = 0, len = SUFS_INODE_SIZE;
	uint64_t blk;
	uint8_t *buf;
	int rc, i = 1;

	if (argc == 3 && strcmp(argv[1], "-b") == 0) {
		from = 96;
		len = SUFS_NBLOCKS * 8;
		i = 2;
	}
	if (argc != i + 1)
		return inspect_usage(argv[0]);
	if (resolve(s, argv[0], argv[i], 0, &ino))
		return 1;
	buf = malloc(sb->block_size);
	if (!buf)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	inode_place(sb, ino, &blk, &off);
	rc = sufs_block_read(s->fs, blk, buf);
	if (!rc)
		hex_dump(buf + off + from, len, from);
	free(buf);
	return rc ? fail(argv[0], argv[i], "%s", sufs_strerror(rc)) : 0;
}

/* dirsearch DIR NAME: where NAME's entry lies in DIR, read from the
 * directory's blocks as they are in memory */
int cmd_dirsearch(struct session *s, int argc, char **argv)
{
	uint32_t bs = sufs_get_super(s->fs)->block_size, dir, off, ino, rec;
	size_t len;
	struct sufs_stat st;
	uint64_t lblk, pblk;
	uint8_t *buf, *de;
	int rc;

	if (argc != 3)
		return inspect_usage(argv[0]);
	if (resolve(s, argv[0], argv[1], 1, &dir))
		return 1;
	rc = sufs_stat(s->fs, dir, &st);
	if (rc)
		return fail(argv[0], argv[1], "%s", sufs_strerror(rc));
	if (!S_ISDIR(st.mode))
		return fail(argv[0], argv[1], "not a directory");
	len = strlen(argv[2]);
	buf = malloc(bs);
	if (!buf)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	for (lblk = 0; lblk < st.size / bs; lblk++) {
		rc = sufs_bmap(s->fs, dir, lblk, &pblk);
		if (!rc && pblk)
			rc = sufs_block_read(s->fs, pblk, buf);
		if (rc || !pblk)
			continue;  /* a hole or an unreadable block: the others are searched */
		/* entries tile bytes 0 to bs - 9, before the tail (sufs(5)) */
		for (off = 0; off + SUFS_DIRENT_HDR <= bs - SUFS_DIR_TAIL_SIZE; off += rec) {
			de = buf + off;
			ino = (uint32_t)de[0] | (uint32_t)de[1] << 8 | (uint32_t)de[2] << 16 |
			      (uint32_t)de[3] << 24;
			rec = (uint32_t)de[4] | (uint32_t)de[5] << 8;
			if (rec < SUFS_DIRENT_HDR || rec % 8 || off + rec > bs - SUFS_DIR_TAIL_SIZE)
				break;    /* damaged: the rest of the block is not followed */
			if (ino && de[6] == len && SUFS_DIRENT_HDR + len <= rec &&
			    memcmp(de + SUFS_DIRENT_HDR, argv[2], len) == 0) {
				printf("Entry found at logical block %llu, phys %llu, offset %u\n",
				       (unsigned long long)lblk, (unsigned long long)pblk, off);
				free(buf);
				return 0;
			}
		}
	}
	free(buf);
	return fail(argv[0], argv[2], "no such entry in %s", shown(argv[1]));
}

/* imap PATH: where an inode lies */
int cmd_imap(struct session *s, int argc, char **argv)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	struct sufs_group_layout l;
	uint32_t ino, g, index, ipb = sb->block_size / SUFS_INODE_SIZE;

	if (argc != 2)
		return inspect_usage(argv[0]);
	if (resolve(s, argv[0], argv[1], 0, &ino))
		return 1;
	g = (ino - 1) / sb->inodes_per_group;
	index = (ino - 1) % sb->inodes_per_group;
	sufs_group_layout(sb, g, &l);
	printf("Inode %u is part of block group %u\n", ino, g);
	printf("\tlocated at block %llu, offset 0x%04x\n",
	       (unsigned long long)(l.inode_table + index / ipb),
	       index % ipb * SUFS_INODE_SIZE);
	return 0;
}

/* testb BLOCK [COUNT] */
int cmd_testb(struct session *s, int argc, char **argv)
{
	uint64_t blk, count = 1, i, n = sufs_get_super(s->fs)->blocks_count;
	int set, rc;

	if (argc < 2 || argc > 3)
		return inspect_usage(argv[0]);
	if (parse_block(s, argv[0], argv[1], &blk))
		return 1;
	if (argc == 3 && (parse_u64(argv[2], &count) || count == 0 || count > n - blk))
		return fail(argv[0], argv[2], "not a count of blocks from %llu (at most %llu)",
			    (unsigned long long)blk, (unsigned long long)(n - blk));
	for (i = blk; i < blk + count; i++) {
		rc = sufs_bitmap_test(s->fs, SUFS_BITMAP_BLOCK, i, &set);
		if (rc)
			return fail(argv[0], argv[1], "%s", sufs_strerror(rc));
		printf("Block %llu %s\n", (unsigned long long)i, set ? "marked in use" : "not in use");
	}
	return 0;
}

/* testi PATH */
int cmd_testi(struct session *s, int argc, char **argv)
{
	uint32_t ino;
	int set, rc;

	if (argc != 2)
		return inspect_usage(argv[0]);
	if (resolve(s, argv[0], argv[1], 0, &ino))
		return 1;
	rc = sufs_bitmap_test(s->fs, SUFS_BITMAP_INODE, ino, &set);
	if (rc)
		return fail(argv[0], argv[1], "%s", sufs_strerror(rc));
	printf("Inode %u is %s\n", ino, set ? "marked in use" : "not in use");
	return 0;
}

/*
 * ffb [COUNT [GOAL]], ffi [COUNT [GOAL]]: the first COUNT free blocks or
 * inodes at or after GOAL, wrapping around to the start.
 */
static int find_free(struct session *s, int argc, char **argv, enum sufs_bitmap which)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	uint64_t first = which == SUFS_BITMAP_BLOCK ? 0 : 1;
	uint64_t total = which == SUFS_BITMAP_BLOCK ? sb->blocks_count : sb->inodes_count;
	uint64_t count = 1, goal = first, i, n, found = 0;
	int set, rc;

	if (argc > 3)
		return inspect_usage(argv[0]);
	if (argc > 1 && (parse_u64(argv[1], &count) || count == 0))
		return fail(argv[0], argv[1], "not a count");
	if (argc > 2 && (parse_u64(argv[2], &goal) || goal < first || goal >= first + total))
		return fail(argv[0], argv[2], "not %s number (the image has %llu to %llu)",
			    which == SUFS_BITMAP_BLOCK ? "a block" : "an inode",
			    (unsigned long long)first, (unsigned long long)(first + total - 1));
	for (i = 0; i < total && found < count; i++) {
		n = first + (goal - first + i) % total;
		rc = sufs_bitmap_test(s->fs, which, n, &set);
		if (rc)
			return fail(argv[0], NULL, "%s", sufs_strerror(rc));
		if (set)
			continue;
		printf("%s%llu", found ? " " : which == SUFS_BITMAP_BLOCK ? "Free blocks found: " :
			"Free inodes found: ", (unsigned long long)n);
		found++;
	}
	if (found)
		putchar('\n');
	if (found < count)
		return fail(argv[0], NULL, "only %llu free %s found, not %llu",
			    (unsigned long long)found,
			    which == SUFS_BITMAP_BLOCK ? "blocks" : "inodes",
			    (unsigned long long)count);
	return 0;
}

int cmd_ffb(struct session *s, int argc, char **argv)
{
	return find_free(s, argc, argv, SUFS_BITMAP_BLOCK);
}

int cmd_ffi(struct session *s, int argc, char **argv)
{
	return find_free(s, argc, argv, SUFS_BITMAP_INODE);
}
