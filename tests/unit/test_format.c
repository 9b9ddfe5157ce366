/*
 * test_format.c - the on-disk format: byte order, field offsets and
 * checksums of the superblock, group descriptor and inode; the sanity check
 * of a superblock; group geometry; the small name tables.
 *
 * The offsets and checksum rules asserted here are those of man/sufs.5,
 * computed independently (zlib's crc32), not taken from the library.
 */
#include "config.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* CRC-32 of a little-endian number, then of len bytes: the seeded checksums. */
static uint32_t seeded_crc(uint64_t seed, unsigned seed_bytes, const uint8_t *p, size_t len)
{
	uint8_t s[8];
	unsigned i;

	for (i = 0; i < seed_bytes; i++)
		s[i] = (uint8_t)(seed >> (8 * i));
	return (uint32_t)crc32(crc32(0, s, seed_bytes), p, (uInt)len);
}

/* ---- superblock ------------------------------------------------------------ */

/* Every field a different value, every byte of a value different. */
static void fill_super(struct sufs_super *sb)
{
	unsigned i;

	memset(sb, 0, sizeof(*sb));
	sb->magic = 0x11223344;
	sb->version = 0x01020304;
	sb->block_size = 0x05060708;
	sb->inode_size = 0x090a0b0c;
	sb->blocks_count = 0x1112131415161718ull;
	sb->free_blocks = 0x2122232425262728ull;
	sb->inodes_count = 0x31323334;
	sb->free_inodes = 0x35363738;
	sb->blocks_per_group = 0x41424344;
	sb->inodes_per_group = 0x45464748;
	sb->groups_count = 0x51525354;
	sb->gdt_blocks = 0x55565758;
	sb->root_ino = 0x61626364;
	sb->first_ino = 0x65666768;
	sb->state = 0x71727374;
	sb->flags = 0x75767778;
	sb->write_mode = 0x81828384;
	sb->mount_count = 0x85868788;
	sb->mkfs_time = -0x0102030405060708ll;
	sb->mount_time = 0x0a0b0c0d0e0f1011ll;
	sb->write_time = 0x1a1b1c1d1e1f2021ll;
	sb->check_time = 0x2a2b2c2d2e2f3031ll;
	for (i = 0; i < 16; i++)
		sb->uuid[i] = (uint8_t)(0xc0 + i);
	for (i = 0; i < sizeof(sb->label); i++)
		sb->label[i] = (char)('A' + i % 26);
	sb->sb_group = 0x91929394;
	sb->features_compat = 0x95969798;
	sb->features_incompat = 0xa1a2a3a4;
	sb->features_ro_compat = 0xa5a6a7a8;
	sb->check_result = 0xb1b2b3b4;
	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		sb->snap[i].ino = 0x1000 + i;
		sb->snap[i].flags = 0x2000 + i;
		sb->snap[i].time = -(int64_t)(0x300000000ll + i);
	}
}

static void superblock_round_trip_keeps_every_field(void **state)
{
	struct sufs_super a, b;
	uint8_t raw[SUFS_SB_SIZE];
	unsigned i;

	(void)state;
	fill_super(&a);
	sufs_super_encode(&a, raw);
	sufs_super_decode(raw, &b);
	assert_int_equal(b.magic, a.magic);
	assert_int_equal(b.version, a.version);
	assert_int_equal(b.block_size, a.block_size);
	assert_int_equal(b.inode_size, a.inode_size);
	assert_int_equal(b.blocks_count, a.blocks_count);
	assert_int_equal(b.free_blocks, a.free_blocks);
	assert_int_equal(b.inodes_count, a.inodes_count);
	assert_int_equal(b.free_inodes, a.free_inodes);
	assert_int_equal(b.blocks_per_group, a.blocks_per_group);
	assert_int_equal(b.inodes_per_group, a.inodes_per_group);
	assert_int_equal(b.groups_count, a.groups_count);
	assert_int_equal(b.gdt_blocks, a.gdt_blocks);
	assert_int_equal(b.root_ino, a.root_ino);
	assert_int_equal(b.first_ino, a.first_ino);
	assert_int_equal(b.state, a.state);
	assert_int_equal(b.flags, a.flags);
	assert_int_equal(b.write_mode, a.write_mode);
	assert_int_equal(b.mount_count, a.mount_count);
	assert_int_equal(b.mkfs_time, a.mkfs_time);
	assert_int_equal(b.mount_time, a.mount_time);
	assert_int_equal(b.write_time, a.write_time);
	assert_int_equal(b.check_time, a.check_time);
	assert_memory_equal(b.uuid, a.uuid, sizeof(a.uuid));
	assert_memory_equal(b.label, a.label, sizeof(a.label));
	assert_int_equal(b.sb_group, a.sb_group);
	assert_int_equal(b.features_compat, a.features_compat);
	assert_int_equal(b.features_incompat, a.features_incompat);
	assert_int_equal(b.features_ro_compat, a.features_ro_compat);
	assert_int_equal(b.check_result, a.check_result);
	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		assert_int_equal(b.snap[i].ino, a.snap[i].ino);
		assert_int_equal(b.snap[i].flags, a.snap[i].flags);
		assert_int_equal(b.snap[i].time, a.snap[i].time);
	}
	assert_int_equal(b.checksum, sufs_super_csum(raw));
}

static void superblock_fields_are_little_endian_at_documented_offsets(void **state)
{
	struct sufs_super sb;
	uint8_t raw[SUFS_SB_SIZE];
	static const uint8_t sufs[4] = { 'S', 'U', 'F', 'S' };

	(void)state;
	fill_super(&sb);
	sb.magic = SUFS_MAGIC;
	sufs_super_encode(&sb, raw);
	assert_memory_equal(raw + 0, sufs, 4);
	assert_int_equal(le32(raw + 4), sb.version);
	assert_int_equal(raw[8], 0x08);
	assert_int_equal(raw[11], 0x05);
	assert_int_equal(le32(raw + 8), sb.block_size);
	assert_int_equal(le64(raw + 16), sb.blocks_count);
	assert_int_equal(le64(raw + 24), sb.free_blocks);
	assert_int_equal(le32(raw + 48), sb.groups_count);
	assert_int_equal(le64(raw + 80), (uint64_t)sb.mkfs_time);
	assert_memory_equal(raw + 112, sb.uuid, 16);
	assert_memory_equal(raw + 128, sb.label, 64);
	assert_int_equal(le32(raw + 208), sb.check_result);
	assert_int_equal(le32(raw + 256), sb.snap[0].ino);
	assert_int_equal(le32(raw + 256 + 19 * 32), sb.snap[19].ino);
	assert_int_equal(le64(raw + 256 + 19 * 32 + 8), (uint64_t)sb.snap[19].time);
	assert_int_equal(le32(raw + 1020), seeded_crc(0, 0, raw, 1020));
	assert_int_equal(sufs_super_csum(raw), seeded_crc(0, 0, raw, 1020));
}

static void superblock_checksum_changes_when_any_covered_byte_changes(void **state)
{
	struct sufs_super sb;
	uint8_t raw[SUFS_SB_SIZE];
	uint32_t good;
	unsigned i;

	(void)state;
	fill_super(&sb);
	sufs_super_encode(&sb, raw);
	good = sufs_super_csum(raw);
	for (i = 0; i < 1020; i++) {
		raw[i] ^= 0x01;
		assert_int_not_equal(sufs_super_csum(raw), good);
		raw[i] ^= 0x01;
	}
	/* the checksum field itself is not covered */
	raw[1020] ^= 0xff;
	assert_int_equal(sufs_super_csum(raw), good);
}

/* ---- group descriptor ---------------------------------------------------------- */

static void group_descriptor_round_trip_keeps_every_field(void **state)
{
	struct sufs_group a = {
		.free_blocks = 0x01020304, .free_inodes = 0x05060708,
		.used_dirs = 0x090a0b0c, .flags = 0x0d0e0f10,
		.block_bitmap = 0x1112131415161718ull,
		.inode_bitmap = 0x2122232425262728ull,
		.inode_table = 0x3132333435363738ull,
	};
	struct sufs_group b;
	uint8_t raw[SUFS_GROUP_DESC_SIZE];

	(void)state;
	sufs_group_encode(&a, 7, raw);
	sufs_group_decode(raw, &b);
	assert_int_equal(b.free_blocks, a.free_blocks);
	assert_int_equal(b.free_inodes, a.free_inodes);
	assert_int_equal(b.used_dirs, a.used_dirs);
	assert_int_equal(b.flags, a.flags);
	assert_int_equal(b.block_bitmap, a.block_bitmap);
	assert_int_equal(b.inode_bitmap, a.inode_bitmap);
	assert_int_equal(b.inode_table, a.inode_table);
	assert_int_equal(b.checksum, sufs_group_csum(raw, 7));
	assert_int_equal(le32(raw + 0), a.free_blocks);
	assert_int_equal(le64(raw + 16), a.block_bitmap);
	assert_int_equal(le64(raw + 32), a.inode_table);
}

static void group_checksum_at_60_is_crc_of_group_number_then_bytes_0_to_59(void **state)
{
	struct sufs_group gd = { .free_blocks = 100, .free_inodes = 50, .inode_table = 9 };
	uint8_t raw[SUFS_GROUP_DESC_SIZE];
	uint32_t c5;
	unsigned i;

	(void)state;
	sufs_group_encode(&gd, 5, raw);
	c5 = le32(raw + 60);
	assert_int_equal(c5, seeded_crc(5, 4, raw, 60));
	assert_int_equal(sufs_group_csum(raw, 5), c5);
	/* the same bytes in another group carry another checksum */
	assert_int_not_equal(sufs_group_csum(raw, 6), c5);
	assert_int_not_equal(sufs_group_csum(raw, 0x100005), c5);
	for (i = 0; i < 60; i++) {
		raw[i] ^= 0x80;
		assert_int_not_equal(sufs_group_csum(raw, 5), c5);
		raw[i] ^= 0x80;
	}
}

/* ---- inode ---------------------------------------------------------------------------- */

static void fill_inode(struct sufs_inode *in)
{
	unsigned i;

	memset(in, 0, sizeof(*in));
	in->mode = 0x81a4;
	in->flags = 0x0102;
	in->links = 0x03040506;
	in->uid = 0x0708090a;
	in->gid = 0x0b0c0d0e;
	in->size = 0x1112131415161718ull;
	in->blocks = 0x2122232425262728ull;
	in->atime = -0x3132333435363738ll;
	in->mtime = 0x4142434445464748ll;
	in->ctime = 0x5152535455565758ll;
	in->crtime = 0x6162636465666768ll;
	in->atime_ns = 0x71727374;
	in->mtime_ns = 0x75767778;
	in->ctime_ns = 0x797a7b7c;
	in->crtime_ns = 0x7d7e7f80;
	in->generation = 0x81828384;
	in->rdev_major = 0x85868788;
	in->rdev_minor = 0x898a8b8c;
	for (i = 0; i < SUFS_NBLOCKS; i++)
		in->block[i] = 0x9000000000000000ull + 0x0101010101ull * i;
}

static void inode_round_trip_keeps_every_field(void **state)
{
	struct sufs_inode a, b;
	uint8_t raw[SUFS_INODE_SIZE];
	unsigned i;

	(void)state;
	fill_inode(&a);
	sufs_inode_encode(&a, 1234, raw);
	sufs_inode_decode(raw, &b);
	assert_int_equal(b.mode, a.mode);
	assert_int_equal(b.flags, a.flags);
	assert_int_equal(b.links, a.links);
	assert_int_equal(b.uid, a.uid);
	assert_int_equal(b.gid, a.gid);
	assert_int_equal(b.size, a.size);
	assert_int_equal(b.blocks, a.blocks);
	assert_int_equal(b.atime, a.atime);
	assert_int_equal(b.mtime, a.mtime);
	assert_int_equal(b.ctime, a.ctime);
	assert_int_equal(b.crtime, a.crtime);
	assert_int_equal(b.atime_ns, a.atime_ns);
	assert_int_equal(b.mtime_ns, a.mtime_ns);
	assert_int_equal(b.ctime_ns, a.ctime_ns);
	assert_int_equal(b.crtime_ns, a.crtime_ns);
	assert_int_equal(b.generation, a.generation);
	assert_int_equal(b.rdev_major, a.rdev_major);
	assert_int_equal(b.rdev_minor, a.rdev_minor);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		assert_int_equal(b.block[i], a.block[i]);
	assert_int_equal(b.checksum, sufs_inode_csum(raw, 1234));
}

static void inode_fields_are_little_endian_at_documented_offsets(void **state)
{
	struct sufs_inode in;
	uint8_t raw[SUFS_INODE_SIZE];
	unsigned i;

	(void)state;
	fill_inode(&in);
	sufs_inode_encode(&in, 77, raw);
	assert_int_equal(raw[0], 0xa4);
	assert_int_equal(raw[1], 0x81);
	assert_int_equal(le32(raw + 4), in.links);
	assert_int_equal(raw[16], 0x18);
	assert_int_equal(le64(raw + 16), in.size);
	assert_int_equal(le64(raw + 24), in.blocks);
	assert_int_equal(le32(raw + 80), in.generation);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		assert_int_equal(le64(raw + 96 + 8 * i), in.block[i]);
	for (i = 216; i < 252; i++)
		assert_int_equal(raw[i], 0); /* reserved */
	assert_int_equal(le32(raw + 252), seeded_crc(77, 4, raw, 252));
}

static void inode_checksum_is_seeded_by_inode_number_and_covers_bytes_0_to_251(void **state)
{
	struct sufs_inode in;
	uint8_t raw[SUFS_INODE_SIZE];
	uint32_t c;
	unsigned i;

	(void)state;
	fill_inode(&in);
	sufs_inode_encode(&in, 12, raw);
	c = le32(raw + 252);
	assert_int_equal(sufs_inode_csum(raw, 12), c);
	assert_int_not_equal(sufs_inode_csum(raw, 13), c);
	assert_int_not_equal(sufs_inode_csum(raw, 12 + (1u << 24)), c);
	for (i = 0; i < 252; i++) {
		raw[i] ^= 0x10;
		assert_int_not_equal(sufs_inode_csum(raw, 12), c);
		raw[i] ^= 0x10;
	}
	raw[253] ^= 0x10;
	assert_int_equal(sufs_inode_csum(raw, 12), c);
}

static void all_zero_inode_encodes_to_zeros_without_checksum(void **state)
{
	struct sufs_inode in;
	uint8_t raw[SUFS_INODE_SIZE];
	unsigned i;

	(void)state;
	memset(&in, 0, sizeof(in));
	memset(raw, 0xee, sizeof(raw));
	sufs_inode_encode(&in, 3, raw);
	for (i = 0; i < SUFS_INODE_SIZE; i++)
		assert_int_equal(raw[i], 0);
	assert_true(sufs_inode_is_zero(raw));
	raw[100] = 1;
	assert_false(sufs_inode_is_zero(raw));
}

/* ---- directory block tail ------------------------------------------------------------------- */

static void dirblock_seal_writes_tail_magic_and_checksum_seeded_by_block_number(void **state)
{
	uint32_t bs = 1024;
	uint8_t *blk = malloc(bs);
	uint32_t c;
	unsigned i;

	(void)state;
	assert_non_null(blk);
	tu_pattern_fill(blk, bs, 1, 0);
	sufs_dirblock_seal(blk, bs, 0x123456789ull);
	assert_int_equal(le32(blk + bs - 8), 0x4c494154u);
	assert_memory_equal(blk + bs - 8, "TAIL", 4);
	c = le32(blk + bs - 4);
	assert_int_equal(c, seeded_crc(0x123456789ull, 8, blk, bs - 4));
	assert_int_equal(sufs_dirblock_csum(blk, bs, 0x123456789ull), c);
	/* the block number is all 64 bits of the seed */
	assert_int_not_equal(sufs_dirblock_csum(blk, bs, 0x23456789ull), c);
	for (i = 0; i < bs - 4; i += 7) {
		blk[i] ^= 0x04;
		assert_int_not_equal(sufs_dirblock_csum(blk, bs, 0x123456789ull), c);
		blk[i] ^= 0x04;
	}
	free(blk);
}

/* ---- sufs_super_check ------------------------------------------------------------------------ */

/* 8 groups of 1024 blocks of 1 KiB. */
static void good_super(struct sufs_super *sb)
{
	struct sufs_mkfs_opts o;

	tu_default_opts(&o, 1024);
	o.blocks_per_group = 1024;
	assert_int_equal(sufs_mkfs_layout(8u << 20, &o, sb), 0);
	assert_int_equal(sb->groups_count, 8);
}

static void expect_rejected(const struct sufs_super *sb, uint64_t dev_bytes, int err,
			    const char *field)
{
	const char *why = "untouched";

	assert_int_equal(sufs_super_check(sb, dev_bytes, &why), err);
	assert_non_null(why);
	assert_string_equal(why, field);
}

static void super_check_accepts_what_mkfs_layout_computes(void **state)
{
	struct sufs_super sb;
	const char *why = "untouched";

	(void)state;
	good_super(&sb);
	assert_int_equal(sufs_super_check(&sb, 0, &why), 0);
	assert_null(why);
	assert_int_equal(sufs_super_check(&sb, sb.blocks_count * sb.block_size, NULL), 0);
}

static void super_check_rejects_each_bad_field_by_name(void **state)
{
	struct sufs_super good, bad;

	(void)state;
	good_super(&good);

	bad = good; bad.magic = 0x53465554;
	expect_rejected(&bad, 0, -SUFS_EMAGIC, "magic");
	bad = good; bad.version = 2;
	expect_rejected(&bad, 0, -SUFS_EVERSION, "version");
	bad = good; bad.features_incompat = 1;
	expect_rejected(&bad, 0, -SUFS_EFEATURE, "features_incompat");
	bad = good; bad.block_size = 3072;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "block_size");
	bad = good; bad.block_size = 512;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "block_size");
	bad = good; bad.block_size = 131072;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "block_size");
	bad = good; bad.inode_size = 128;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "inode_size");
	bad = good; bad.blocks_per_group = 56;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "blocks_per_group");
	bad = good; bad.blocks_per_group = 1028;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "blocks_per_group");
	bad = good; bad.blocks_per_group = 8 * 1024 + 8;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "blocks_per_group");
	bad = good; bad.inodes_per_group = 0;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "inodes_per_group");
	bad = good; bad.inodes_per_group = good.inodes_per_group + 1;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "inodes_per_group");
	bad = good; bad.inodes_per_group = 8 * 1024 + 4;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "inodes_per_group");
	bad = good; bad.blocks_count = 0;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "blocks_count");
	bad = good; bad.groups_count = good.groups_count + 1;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "groups_count or blocks_count");
	bad = good; bad.inodes_count = good.inodes_count + 1;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "inodes_count");
	bad = good; bad.gdt_blocks = good.gdt_blocks + 1;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "gdt_blocks");
	bad = good; bad.root_ino = 3;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "root_ino");
	bad = good; bad.first_ino = 11;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "first_ino");
	bad = good; bad.write_mode = SUFS_MODE_ASYNC + 1;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "write_mode");
	/* a last group of 3 blocks cannot hold its bitmaps and inode table */
	bad = good; bad.blocks_count = 7 * 1024 + 3;
	expect_rejected(&bad, 0, -SUFS_ECORRUPT, "blocks_count");
}

static void super_check_rejects_a_device_shorter_than_the_file_system(void **state)
{
	struct sufs_super sb;

	(void)state;
	good_super(&sb);
	expect_rejected(&sb, sb.blocks_count * sb.block_size - 1, -SUFS_ETRUNCATED,
			"blocks_count");
	assert_int_equal(sufs_super_check(&sb, sb.blocks_count * sb.block_size + 4096, NULL), 0);
}

/* ---- geometry --------------------------------------------------------------------------------- */

static void backup_superblocks_are_in_group_1_and_powers_of_3_5_and_7(void **state)
{
	static const uint32_t expect[] = { 1, 3, 5, 7, 9, 25, 27, 49, 81, 125, 243, 343, 625, 729 };
	unsigned i = 0;
	uint32_t g;

	(void)state;
	for (g = 0; g <= 1000; g++) {
		if (i < sizeof(expect) / sizeof(expect[0]) && g == expect[i]) {
			assert_true(sufs_group_has_backup(g));
			i++;
		} else if (sufs_group_has_backup(g)) {
			fail_msg("group %u has a backup superblock", g);
		}
	}
	assert_int_equal(i, sizeof(expect) / sizeof(expect[0]));
}

/* 60 groups of 128 blocks of 1 KiB, the last one 100 blocks long. */
static void sixty_groups(struct sufs_super *sb)
{
	struct sufs_mkfs_opts o;

	tu_default_opts(&o, 1024);
	o.blocks_per_group = 128;
	assert_int_equal(sufs_mkfs_layout((59 * 128 + 100) * 1024ull, &o, sb), 0);
	assert_int_equal(sb->groups_count, 60);
	assert_int_equal(sb->blocks_count, 59 * 128 + 100);
	assert_int_equal(sb->gdt_blocks, 4); /* 60 x 64 bytes */
}

static void group_0_holds_boot_block_superblock_and_gdt_with_1k_blocks(void **state)
{
	struct sufs_super sb;
	struct sufs_group_layout l;
	uint32_t itb;

	(void)state;
	sixty_groups(&sb);
	itb = sb.inodes_per_group / (1024 / SUFS_INODE_SIZE);
	sufs_group_layout(&sb, 0, &l);
	assert_int_equal(l.start, 0);
	assert_int_equal(l.end, 128);
	assert_int_equal(l.sb_block, 1);    /* block 0 is the boot block */
	assert_int_equal(l.gdt_start, 2);
	assert_int_equal(l.gdt_blocks, 4);
	assert_int_equal(l.block_bitmap, 6);
	assert_int_equal(l.inode_bitmap, 7);
	assert_int_equal(l.inode_table, 8);
	assert_int_equal(l.inode_table_blocks, itb);
	assert_int_equal(l.first_data, 8 + itb);
	assert_int_equal(sufs_group_overhead(&sb, 0), 8 + itb);
}

static void group_0_shares_block_0_between_boot_area_and_superblock_with_4k_blocks(void **state)
{
	struct sufs_super sb;
	struct sufs_mkfs_opts o;
	struct sufs_group_layout l;

	(void)state;
	tu_default_opts(&o, 4096);
	assert_int_equal(sufs_mkfs_layout(64u << 20, &o, &sb), 0);
	assert_int_equal(sb.groups_count, 1);
	sufs_group_layout(&sb, 0, &l);
	assert_int_equal(l.sb_block, 0);
	assert_int_equal(l.gdt_start, 1);
	assert_int_equal(l.gdt_blocks, 1);
	assert_int_equal(l.block_bitmap, 2);
	assert_int_equal(l.inode_bitmap, 3);
	assert_int_equal(l.inode_table, 4);
	assert_int_equal(l.end, 16384);
}

static void backup_group_starts_with_superblock_copy_and_others_with_bitmaps(void **state)
{
	struct sufs_super sb;
	struct sufs_group_layout l;

	(void)state;
	sixty_groups(&sb);
	sufs_group_layout(&sb, 25, &l);
	assert_int_equal(l.start, 25 * 128);
	assert_int_equal(l.end, 26 * 128);
	assert_int_equal(l.sb_block, 25 * 128);
	assert_int_equal(l.gdt_start, UINT64_MAX);
	assert_int_equal(l.gdt_blocks, 0);
	assert_int_equal(l.block_bitmap, 25 * 128 + 1);
	assert_int_equal(l.inode_bitmap, 25 * 128 + 2);
	assert_int_equal(l.inode_table, 25 * 128 + 3);

	sufs_group_layout(&sb, 26, &l);
	assert_int_equal(l.sb_block, UINT64_MAX);
	assert_int_equal(l.block_bitmap, 26 * 128);
	assert_int_equal(l.inode_table, 26 * 128 + 2);
	assert_int_equal(sufs_group_overhead(&sb, 26) + 1, sufs_group_overhead(&sb, 27));
}

static void last_group_ends_at_the_last_block(void **state)
{
	struct sufs_super sb;
	struct sufs_group_layout l;

	(void)state;
	sixty_groups(&sb);
	sufs_group_layout(&sb, 59, &l);
	assert_int_equal(l.start, 59 * 128);
	assert_int_equal(l.end, 59 * 128 + 100);
	assert_int_equal(l.end, sb.blocks_count);
}

static void backup_offset_lists_each_backup_in_order_then_enoent(void **state)
{
	static const uint32_t groups[] = { 1, 3, 5, 7, 9, 25, 27, 49 };
	struct sufs_super sb;
	uint64_t off = 0;
	unsigned n;

	(void)state;
	sixty_groups(&sb);
	for (n = 0; n < 8; n++) {
		assert_int_equal(sufs_backup_offset(&sb, n, &off), 0);
		assert_int_equal(off, (uint64_t)groups[n] * 128 * 1024);
	}
	assert_int_equal(sufs_backup_offset(&sb, 8, &off), -ENOENT);
	assert_int_equal(sufs_backup_offset(&sb, 1000, &off), -ENOENT);
}

static void mkfs_layout_refuses_impossible_geometry(void **state)
{
	struct sufs_super sb;
	struct sufs_mkfs_opts o;

	(void)state;
	tu_default_opts(&o, 3000);
	assert_int_equal(sufs_mkfs_layout(16u << 20, &o, &sb), -EINVAL);
	tu_default_opts(&o, 4096);
	assert_int_equal(sufs_mkfs_layout(63 * 4096, &o, &sb), -SUFS_EGEOMETRY);
	o.blocks_per_group = 100;
	assert_int_equal(sufs_mkfs_layout(16u << 20, &o, &sb), -EINVAL);
}

/* ---- names ------------------------------------------------------------------------------------ */

static void ftype_of_mode_maps_every_file_type(void **state)
{
	(void)state;
	assert_int_equal(sufs_ftype_of_mode(S_IFREG | 0644), SUFS_FT_REG);
	assert_int_equal(sufs_ftype_of_mode(S_IFDIR | 0755), SUFS_FT_DIR);
	assert_int_equal(sufs_ftype_of_mode(S_IFCHR), SUFS_FT_CHR);
	assert_int_equal(sufs_ftype_of_mode(S_IFBLK | 07777), SUFS_FT_BLK);
	assert_int_equal(sufs_ftype_of_mode(S_IFIFO), SUFS_FT_FIFO);
	assert_int_equal(sufs_ftype_of_mode(S_IFSOCK), SUFS_FT_SOCK);
	assert_int_equal(sufs_ftype_of_mode(S_IFLNK | 0777), SUFS_FT_LNK);
	assert_int_equal(sufs_ftype_of_mode(0644), SUFS_FT_UNKNOWN);
	assert_int_equal(sufs_ftype_of_mode(0), SUFS_FT_UNKNOWN);
}

static void mode_names_parse_back_to_their_mode(void **state)
{
	unsigned m, got;

	(void)state;
	assert_string_equal(sufs_mode_name(SUFS_MODE_SOFTDEP), "softdep");
	assert_string_equal(sufs_mode_name(SUFS_MODE_SYNC), "sync");
	assert_string_equal(sufs_mode_name(SUFS_MODE_ASYNC), "async");
	for (m = SUFS_MODE_SOFTDEP; m <= SUFS_MODE_ASYNC; m++) {
		got = 99;
		assert_int_equal(sufs_mode_parse(sufs_mode_name(m), &got), 0);
		assert_int_equal(got, m);
	}
	assert_string_equal(sufs_mode_name(SUFS_MODE_ASYNC + 1), "unknown");
	got = 99;
	assert_int_equal(sufs_mode_parse("unknown", &got), -EINVAL);
	assert_int_equal(sufs_mode_parse("", &got), -EINVAL);
	assert_int_equal(sufs_mode_parse("softdeps", &got), -EINVAL);
	assert_int_equal(got, 99);
}

static void strerror_has_its_own_message_for_every_sufs_error(void **state)
{
	const char *msg[SUFS_ELAST - SUFS_EBASE];
	int e, f;

	(void)state;
	assert_string_equal(sufs_strerror(0), "success");
	for (e = SUFS_EBASE + 1; e < SUFS_ELAST; e++) {
		msg[e - SUFS_EBASE] = sufs_strerror(-e);
		assert_non_null(msg[e - SUFS_EBASE]);
		assert_string_equal(sufs_strerror(e), msg[e - SUFS_EBASE]);
		assert_string_not_equal(msg[e - SUFS_EBASE], "unknown error");
		assert_string_not_equal(msg[e - SUFS_EBASE], strerror(e));
		for (f = SUFS_EBASE + 1; f < e; f++)
			assert_string_not_equal(msg[e - SUFS_EBASE], msg[f - SUFS_EBASE]);
	}
	/* codes outside the enum are not mistaken for one of ours */
	for (e = SUFS_EBASE + 1; e < SUFS_ELAST; e++) {
		assert_string_not_equal(sufs_strerror(-SUFS_ELAST), msg[e - SUFS_EBASE]);
		assert_string_not_equal(sufs_strerror(-SUFS_EBASE), msg[e - SUFS_EBASE]);
		assert_string_not_equal(sufs_strerror(-100000), msg[e - SUFS_EBASE]);
	}
}

static void strerror_passes_errno_values_to_the_c_library(void **state)
{
	static const int errs[] = { ENOENT, ENOSPC, EROFS, EEXIST, ENOTDIR, EISDIR,
				    ENAMETOOLONG, ELOOP, EMLINK, EINVAL, EIO, EFBIG };
	char want[256];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		snprintf(want, sizeof(want), "%s", strerror(errs[i]));
		assert_string_equal(sufs_strerror(-errs[i]), want);
		assert_string_equal(sufs_strerror(errs[i]), want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(superblock_round_trip_keeps_every_field),
		cmocka_unit_test(superblock_fields_are_little_endian_at_documented_offsets),
		cmocka_unit_test(superblock_checksum_changes_when_any_covered_byte_changes),
		cmocka_unit_test(group_descriptor_round_trip_keeps_every_field),
		cmocka_unit_test(group_checksum_at_60_is_crc_of_group_number_then_bytes_0_to_59),
		cmocka_unit_test(inode_round_trip_keeps_every_field),
		cmocka_unit_test(inode_fields_are_little_endian_at_documented_offsets),
		cmocka_unit_test(inode_checksum_is_seeded_by_inode_number_and_covers_bytes_0_to_251),
		cmocka_unit_test(all_zero_inode_encodes_to_zeros_without_checksum),
		cmocka_unit_test(dirblock_seal_writes_tail_magic_and_checksum_seeded_by_block_number),
		cmocka_unit_test(super_check_accepts_what_mkfs_layout_computes),
		cmocka_unit_test(super_check_rejects_each_bad_field_by_name),
		cmocka_unit_test(super_check_rejects_a_device_shorter_than_the_file_system),
		cmocka_unit_test(backup_superblocks_are_in_group_1_and_powers_of_3_5_and_7),
		cmocka_unit_test(group_0_holds_boot_block_superblock_and_gdt_with_1k_blocks),
		cmocka_unit_test(group_0_shares_block_0_between_boot_area_and_superblock_with_4k_blocks),
		cmocka_unit_test(backup_group_starts_with_superblock_copy_and_others_with_bitmaps),
		cmocka_unit_test(last_group_ends_at_the_last_block),
		cmocka_unit_test(backup_offset_lists_each_backup_in_order_then_enoent),
		cmocka_unit_test(mkfs_layout_refuses_impossible_geometry),
		cmocka_unit_test(ftype_of_mode_maps_every_file_type),
		cmocka_unit_test(mode_names_parse_back_to_their_mode),
		cmocka_unit_test(strerror_has_its_own_message_for_every_sufs_error),
		cmocka_unit_test(strerror_passes_errno_values_to_the_c_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
