/*
 * dump.c - sufs-dump: show what a sufs image holds, as dumpe2fs does for
 * ext2, and check every checksum on the way.
 *
 * The default output is the superblock and a summary of every group; -h
 * stops after the superblock, -g prints one line per group, -i prints one
 * inode in full.  --json prints the same as one JSON object.  Every checksum
 * that fails is reported on stderr (and in the JSON) and makes the exit
 * status 4: the superblock's always, the group descriptors' and backup
 * superblocks' with the groups, every inode in use and every directory
 * block with the default output and -g, one inode (and its directory
 * blocks) with -i.
 *
 * The image is opened read-only with SUFS_OPEN_IGNORE_CSUM, so that a
 * damaged image can still be shown.  -m and --restore (metaimage.c) save
 * and restore metadata images.
 */
#include "config.h"
#include "metaimage.h"
#include "ctl.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum show { SHOW_ALL, SHOW_HEADER, SHOW_GROUPS, SHOW_INODE };

/* A checksum that failed. */
enum problem_kind { P_SUPER, P_BACKUP, P_GROUP, P_INODE, P_DIRBLOCK, P_XATTRBLOCK };
static const char *const problem_names[] = {
	[P_SUPER] = "superblock",
	[P_BACKUP] = "backup_superblock",
	[P_GROUP] = "group_descriptor",
	[P_INODE] = "inode",
	[P_DIRBLOCK] = "directory_block",
	[P_XATTRBLOCK] = "attribute_block",
};
struct problem {
	enum problem_kind kind;
	uint32_t group;            /* P_BACKUP, P_GROUP */
	uint32_t ino;              /* P_INODE, P_DIRBLOCK (the directory), P_XATTRBLOCK */
	uint64_t block;            /* P_BACKUP, P_DIRBLOCK, P_XATTRBLOCK */
	uint64_t lblk;             /* P_DIRBLOCK: its logical block in the directory */
	uint32_t stored, computed;
};

/* A tiny JSON writer: nesting and commas, one member per line. */
struct json {
	FILE *f;
	int depth;
	int first[16];
};

struct dump {
	struct sufs_fs *fs;
	const struct sufs_super *sb;
	const char *image;
	uint64_t sb_offset;        /* -s: the backup superblock read, else 0 */
	FILE *out;
	int json;
	struct json j;
	uint8_t *block, *copy;     /* one block each */
	uint8_t *gdt;              /* the raw group descriptor table, once read */
	struct problem *problems;
	size_t nproblems, cap;
	unsigned read_errors;
	/* what was checked, for the summary */
	uint64_t n_super, n_groups, n_inodes, n_dirblocks, n_xattrblocks;
};

/* ---- JSON ------------------------------------------------------------------- */

static void j_sep(struct json *j, const char *key)
{
	if (j->depth > 0) {
		fputs(j->first[j->depth] ? "\n" : ",\n", j->f);
		j->first[j->depth] = 0;
		fprintf(j->f, "%*s", 2 * j->depth, "");
	}
	if (key)
		fprintf(j->f, "\"%s\": ", key);
}

static void j_open(struct json *j, const char *key, char bracket)
{
	j_sep(j, key);
	fputc(bracket, j->f);
	if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0])))
		j->depth++;
	j->first[j->depth] = 1;
}

static void j_close(struct json *j, char bracket)
{
	int empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(bracket, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

static void j_u64(struct json *j, const char *key, uint64_t v)
{
	j_sep(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

static void j_i64(struct json *j, const char *key, int64_t v)
{
	j_sep(j, key);
	fprintf(j->f, "%" PRId64, v);
}

static void j_bool(struct json *j, const char *key, int v)
{
	j_sep(j, key);
	fputs(v ? "true" : "false", j->f);
}

static void j_str(struct json *j, const char *key, const char *s, size_t n)
{
	j_sep(j, key);
	json_str(j->f, s, n);
}

/* A [first, last] pair on one line. */
static void j_range(struct json *j, const char *key, uint64_t first, uint64_t last)
{
	j_sep(j, key);
	fprintf(j->f, "[%" PRIu64 ", %" PRIu64 "]", first, last);
}

/* ---- text helpers -------------------------------------------------------------- */

/* "2024-05-01 12:00:00 +0000", with ".123456789" after the seconds when
 * nsec_too; just the number when it is no date the C library can show. */
static void put_time(FILE *f, int64_t sec, uint32_t nsec, int nsec_too)
{
	char date[64], zone[16];
	time_t t = (time_t)sec;
	struct tm tm;

	if ((int64_t)t != sec || !localtime_r(&t, &tm) ||
	    !strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm) ||
	    !strftime(zone, sizeof(zone), "%z", &tm)) {
		if (nsec_too)
			fputs(seconds_str(sec, nsec, date, sizeof(date)), f);
		else
			fprintf(f, "%" PRId64, sec);
		return;
	}
	fputs(date, f);
	if (nsec_too)
		fprintf(f, ".%09" PRIu32, nsec);
	fprintf(f, " %s", zone);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- one field, in text or JSON ------------------------------------------------- */

#define LABEL_WIDTH 26

static void field_u64(struct dump *d, const char *label, const char *key, uint64_t v)
{
	if (d->json)
		j_u64(&d->j, key, v);
	else
		fprintf(d->out, "%-*s%" PRIu64 "\n", LABEL_WIDTH, label, v);
}

static void field_hex(struct dump *d, const char *label, const char *key, uint64_t v)
{
	if (d->json)
		j_u64(&d->j, key, v);
	else
		fprintf(d->out, "%-*s0x%" PRIx64 "\n", LABEL_WIDTH, label, v);
}

/* A superblock time: "n/a" when 0. */
static void field_time(struct dump *d, const char *label, const char *key, int64_t sec)
{
	if (d->json) {
		j_i64(&d->j, key, sec);
		return;
	}
	fprintf(d->out, "%-*s", LABEL_WIDTH, label);
	if (sec == 0)
		fputs("n/a", d->out);
	else
		put_time(d->out, sec, 0, 0);
	fputc('\n', d->out);
}

/* ---- problems ------------------------------------------------------------------- */

/* Report a failed checksum on stderr, and keep it for the JSON. */
static void problem(struct dump *d, const struct problem *p)
{
	char what[160];

	switch (p->kind) {
	case P_SUPER:
		snprintf(what, sizeof(what), "superblock");
		break;
	case P_BACKUP:
		snprintf(what, sizeof(what), "backup superblock of group %" PRIu32 " (block %" PRIu64 ")",
			 p->group, p->block);
		break;
	case P_GROUP:
		snprintf(what, sizeof(what), "group %" PRIu32 " descriptor", p->group);
		break;
	case P_INODE:
		snprintf(what, sizeof(what), "inode %" PRIu32, p->ino);
		break;
	case P_DIRBLOCK:
		snprintf(what, sizeof(what),
			 "directory inode %" PRIu32 ", block %" PRIu64 " (logical %" PRIu64 ")",
			 p->ino, p->block, p->lblk);
		break;
	case P_XATTRBLOCK:
		snprintf(what, sizeof(what), "inode %" PRIu32 ", attribute block %" PRIu64,
			 p->ino, p->block);
		break;
	}
	if (p->stored != p->computed)
		errmsg("%s: %s: checksum does not match (stored 0x%08" PRIx32
		       ", computed 0x%08" PRIx32 ")", shown(d->image), what, p->stored,
		       p->computed);
	else
		errmsg("%s: %s: checksum tail is damaged", shown(d->image), what);

	if (d->nproblems == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct problem *n = realloc(d->problems, cap * sizeof(*n));
		if (!n)
			return; /* reported on stderr all the same */
		d->problems = n;
		d->cap = cap;
	}
	d->problems[d->nproblems++] = *p;
}

static void read_error(struct dump *d, const char *what, uint64_t n, int err)
{
	errmsg("%s: %s %" PRIu64 ": %s", shown(d->image), what, n, sufs_strerror(err));
	d->read_errors++;
}

static void json_problems(struct dump *d)
{
	struct json *j = &d->j;
	size_t i;

	j_open(j, "checksum_failures", '[');
	for (i = 0; i < d->nproblems; i++) {
		const struct problem *p = &d->problems[i];
		j_open(j, NULL, '{');
		j_str(j, "what", problem_names[p->kind], strlen(problem_names[p->kind]));
		if (p->kind == P_BACKUP || p->kind == P_GROUP)
			j_u64(j, "group", p->group);
		if (p->kind == P_INODE || p->kind == P_DIRBLOCK || p->kind == P_XATTRBLOCK)
			j_u64(j, "ino", p->ino);
		if (p->kind == P_BACKUP || p->kind == P_DIRBLOCK || p->kind == P_XATTRBLOCK)
			j_u64(j, "block", p->block);
		if (p->kind == P_DIRBLOCK)
			j_u64(j, "lblk", p->lblk);
		j_u64(j, "stored", p->stored);
		j_u64(j, "computed", p->computed);
		j_close(j, '}');
	}
	j_close(j, ']');
}

/* ---- raw reads ---------------------------------------------------------------------- */

/* The superblock copy at byte offset off, raw, into d->copy (which it
 * returns), or NULL after a message. */
static const uint8_t *read_super_raw(struct dump *d, uint64_t off)
{
	uint32_t bs = d->sb->block_size;
	uint64_t blk = off / bs;
	int rc = sufs_dev_read(sufs_get_dev(d->fs), blk * bs, d->copy, bs);

	if (rc) {
		read_error(d, "superblock in block", blk, rc);
		return NULL;
	}
	return d->copy + off % bs;
}

/* Check the superblock copy at byte offset off; 1 if its checksum is good,
 * 0 if not, -1 if it could not be read. */
static int check_super_at(struct dump *d, uint64_t off, uint32_t *stored, uint32_t *computed)
{
	const uint8_t *raw = read_super_raw(d, off);
	struct sufs_super copy;

	if (!raw)
		return -1;
	sufs_super_decode(raw, &copy);
	*stored = copy.checksum;
	*computed = sufs_super_csum(raw);
	d->n_super++;
	return *stored == *computed;
}

/* The raw descriptor of group g (the table is read once). */
static const uint8_t *raw_group(struct dump *d, uint32_t g)
{
	const struct sufs_super *sb = d->sb;
	struct sufs_group_layout l;
	uint32_t i;
	int rc;

	if (!d->gdt) {
		sufs_group_layout(sb, 0, &l);
		d->gdt = malloc((size_t)l.gdt_blocks * sb->block_size);
		if (!d->gdt)
			return NULL;
		for (i = 0; i < l.gdt_blocks; i++) {
			rc = sufs_block_read(d->fs, l.gdt_start + i, d->gdt + (size_t)i * sb->block_size);
			if (rc) {
				read_error(d, "group descriptor block", l.gdt_start + i, rc);
				free(d->gdt);
				d->gdt = NULL;
				return NULL;
			}
		}
	}
	return d->gdt + (size_t)g * SUFS_GROUP_DESC_SIZE;
}

/* The checksum inode ino should carry, from its raw bytes (0 if unreadable). */
static uint32_t inode_csum_computed(struct dump *d, uint32_t ino)
{
	const struct sufs_super *sb = d->sb;
	uint32_t per_block = sb->block_size / SUFS_INODE_SIZE;
	uint32_t idx = (ino - 1) % sb->inodes_per_group;
	struct sufs_group_layout l;

	sufs_group_layout(sb, (ino - 1) / sb->inodes_per_group, &l);
	if (sufs_block_read(d->fs, l.inode_table + idx / per_block, d->copy) != 0)
		return 0;
	return sufs_inode_csum(d->copy + (size_t)(idx % per_block) * SUFS_INODE_SIZE, ino);
}

/* ---- the superblock ---------------------------------------------------------------- */

static void show_uuid(struct dump *d, const uint8_t *u)
{
	char s[37];

	snprintf(s, sizeof(s),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	if (d->json)
		j_str(&d->j, "uuid", s, strlen(s));
	else
		fprintf(d->out, "%-*s%s\n", LABEL_WIDTH, "Filesystem UUID:", s);
}

static void show_label(struct dump *d, const char *label)
{
	size_t n = strnlen(label, sizeof(((struct sufs_super *)0)->label));

	if (d->json) {
		j_str(&d->j, "label", label, n);
		return;
	}
	fprintf(d->out, "%-*s", LABEL_WIDTH, "Filesystem volume name:");
	if (n)
		print_name(d->out, label, n);
	else
		fputs("<none>", d->out);
	fputc('\n', d->out);
}

static void show_flags(struct dump *d, uint32_t flags)
{
	static const struct { uint32_t bit; const char *name; } names[] = {
		{ SUFS_FLAG_NEEDS_FSCK, "needs_fsck" },
		{ SUFS_FLAG_INCOMPLETE, "incomplete" },
	};
	uint32_t rest = flags;
	size_t i;

	if (d->json) {
		j_u64(&d->j, "flags", flags);
		j_open(&d->j, "flag_names", '[');
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (flags & names[i].bit)
				j_str(&d->j, NULL, names[i].name, strlen(names[i].name));
		j_close(&d->j, ']');
		return;
	}
	fprintf(d->out, "%-*s", LABEL_WIDTH, "Filesystem flags:");
	if (!flags)
		fputs("(none)", d->out);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & names[i].bit) {
			fprintf(d->out, "%s%s", rest != flags ? " " : "", names[i].name);
			rest &= ~names[i].bit;
		}
	}
	if (rest)
		fprintf(d->out, "%s0x%" PRIx32, rest != flags ? " " : "", rest);
	fputc('\n', d->out);
}

static void show_snapshots(struct dump *d)
{
	const struct sufs_super *sb = d->sb;
	unsigned i, used = 0;
	char label[32];

	if (d->json)
		j_open(&d->j, "snapshots", '[');
	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		const struct sufs_snap_slot *s = &sb->snap[i];
		if (!s->ino)
			continue;
		used++;
		if (d->json) {
			j_open(&d->j, NULL, '{');
			j_u64(&d->j, "slot", i);
			j_u64(&d->j, "ino", s->ino);
			j_u64(&d->j, "flags", s->flags);
			j_i64(&d->j, "time", s->time);
			j_close(&d->j, '}');
			continue;
		}
		snprintf(label, sizeof(label), "Snapshot %u:", i);
		fprintf(d->out, "%-*sinode %" PRIu32 ", flags 0x%" PRIx32 ", taken ", LABEL_WIDTH,
			label, s->ino, s->flags);
		put_time(d->out, s->time, 0, 0);
		fputc('\n', d->out);
	}
	if (d->json)
		j_close(&d->j, ']');
	else if (!used)
		fprintf(d->out, "%-*s(none)\n", LABEL_WIDTH, "Snapshots:");
}

/* Check the checksum of the superblock shown, the primary's unless -s
 * named a backup (every mode does). */
static void check_super(struct dump *d, int *ok, uint32_t *stored, uint32_t *computed)
{
	struct problem p = { .kind = P_SUPER };

	*ok = check_super_at(d, d->sb_offset ? d->sb_offset : SUFS_SB_OFFSET, stored, computed);
	if (*ok == 0) {
		p.stored = *stored;
		p.computed = *computed;
		problem(d, &p);
	}
}

static void show_super(struct dump *d)
{
	const struct sufs_super *sb = d->sb;
	uint32_t stored = 0, computed = 0;
	const char *mode = sufs_mode_name(sb->write_mode);
	const char *dmode = sufs_mode_name(sb->default_mode);
	int ok;

	check_super(d, &ok, &stored, &computed);
	if (d->json)
		j_open(&d->j, "superblock", '{');
	show_label(d, sb->label);
	show_uuid(d, sb->uuid);
	field_hex(d, "Filesystem magic number:", "magic", sb->magic);
	field_u64(d, "Format version:", "version", sb->version);
	if (d->json) {
		j_u64(&d->j, "state", sb->state);
		j_bool(&d->j, "clean", sb->state == SUFS_STATE_CLEAN);
	} else {
		fprintf(d->out, "%-*s%s\n", LABEL_WIDTH, "Filesystem state:",
			sb->state == SUFS_STATE_CLEAN ? "clean" : "not clean");
	}
	show_flags(d, sb->flags);
	if (d->json) {
		j_u64(&d->j, "write_mode", sb->write_mode);
		j_str(&d->j, "write_mode_name", mode, strlen(mode));
		j_u64(&d->j, "default_mode", sb->default_mode);
		j_str(&d->j, "default_mode_name", dmode, strlen(dmode));
	} else {
		fprintf(d->out, "%-*s%s\n", LABEL_WIDTH, "Write mode:", mode);
		fprintf(d->out, "%-*s%s\n", LABEL_WIDTH, "Default write mode:", dmode);
	}
	field_u64(d, "Block size:", "block_size", sb->block_size);
	field_u64(d, "Inode size:", "inode_size", sb->inode_size);
	field_u64(d, "Block count:", "blocks_count", sb->blocks_count);
	field_u64(d, "Free blocks:", "free_blocks", sb->free_blocks);
	field_u64(d, "Inode count:", "inodes_count", sb->inodes_count);
	field_u64(d, "Free inodes:", "free_inodes", sb->free_inodes);
	field_u64(d, "Blocks per group:", "blocks_per_group", sb->blocks_per_group);
	field_u64(d, "Inodes per group:", "inodes_per_group", sb->inodes_per_group);
	field_u64(d, "Group count:", "groups_count", sb->groups_count);
	field_u64(d, "Group descriptor blocks:", "gdt_blocks", sb->gdt_blocks);
	field_u64(d, "Root inode:", "root_ino", sb->root_ino);
	field_u64(d, "First inode:", "first_ino", sb->first_ino);
	field_u64(d, "Superblock of group:", "sb_group", sb->sb_group);
	field_hex(d, "Compatible features:", "features_compat", sb->features_compat);
	field_hex(d, "Incompatible features:", "features_incompat", sb->features_incompat);
	field_hex(d, "Read-only features:", "features_ro_compat", sb->features_ro_compat);
	if (d->json) {
		j_bool(&d->j, "xattr", (sb->features_ro_compat & SUFS_FEATURE_RO_XATTR) != 0);
	} else {
		fprintf(d->out, "%-*s%s\n", LABEL_WIDTH, "Features:",
			sb->features_ro_compat & SUFS_FEATURE_RO_XATTR ? "xattr" : "(none)");
	}
	field_u64(d, "Mount count:", "mount_count", sb->mount_count);
	field_time(d, "Filesystem created:", "mkfs_time", sb->mkfs_time);
	field_time(d, "Last mount time:", "mount_time", sb->mount_time);
	field_time(d, "Last write time:", "write_time", sb->write_time);
	field_time(d, "Last checked:", "check_time", sb->check_time);
	field_u64(d, "Last check result:", "check_result", sb->check_result);
	show_snapshots(d);
	if (d->json) {
		j_u64(&d->j, "checksum", stored);
		j_u64(&d->j, "checksum_computed", computed);
		j_bool(&d->j, "checksum_ok", ok == 1);
		j_close(&d->j, '}');
		return;
	}
	fprintf(d->out, "%-*s", LABEL_WIDTH, "Superblock checksum:");
	if (ok < 0)
		fputs("(unreadable)\n", d->out);
	else if (ok)
		fprintf(d->out, "0x%08" PRIx32 " (ok)\n", stored);
	else
		fprintf(d->out, "0x%08" PRIx32 " (BAD, computed 0x%08" PRIx32 ")\n", stored,
			computed);
}

/* ---- groups ------------------------------------------------------------------------ */

/* What is known about one group. */
struct group_info {
	uint32_t g;
	struct sufs_group_layout l;
	struct sufs_group gd;
	int gd_ok;                 /* descriptor read */
	int csum_bad;
	uint32_t computed;         /* the checksum its raw bytes call for */
	int backup;                /* holds a backup superblock */
	int backup_ok;             /* 1 good, 0 bad, -1 unreadable */
};

static void check_group(struct dump *d, uint32_t g, struct group_info *gi)
{
	struct problem p = { .kind = P_GROUP, .group = g };
	const uint8_t *raw;
	uint32_t stored, computed;
	int rc;

	memset(gi, 0, sizeof(*gi));
	gi->g = g;
	sufs_group_layout(d->sb, g, &gi->l);
	rc = sufs_get_group(d->fs, g, &gi->gd);
	if (rc) {
		read_error(d, "group", g, rc);
		return;
	}
	gi->gd_ok = 1;
	d->n_groups++;
	raw = raw_group(d, g);
	gi->computed = raw ? sufs_group_csum(raw, g) : 0;
	/* the checksum alone: locations and counts that do not fit the
	 * geometry (which the library counts as damage too) show as such */
	gi->csum_bad = raw ? gi->gd.checksum != gi->computed : sufs_group_csum_bad(d->fs, g) != 0;
	if (gi->csum_bad) {
		p.stored = gi->gd.checksum;
		p.computed = gi->computed;
		problem(d, &p);
	}
	if (g != 0 && gi->l.sb_block != UINT64_MAX) {
		gi->backup = 1;
		gi->backup_ok = check_super_at(d, gi->l.sb_block * d->sb->block_size, &stored,
					       &computed);
		if (gi->backup_ok == 0) {
			struct problem b = { .kind = P_BACKUP, .group = g, .block = gi->l.sb_block,
					     .stored = stored, .computed = computed };
			problem(d, &b);
		}
	}
}

/* The last block of the inode table the descriptor names. */
static uint64_t itable_last(const struct group_info *gi)
{
	return gi->gd.inode_table + gi->l.inode_table_blocks - 1;
}

static void put_checksum_status(struct dump *d, const struct group_info *gi)
{
	if (!gi->csum_bad)
		fprintf(d->out, "0x%08" PRIx32 " (ok)", gi->gd.checksum);
	else
		fprintf(d->out, "0x%08" PRIx32 " (BAD, computed 0x%08" PRIx32 ")",
			gi->gd.checksum, gi->computed);
}

/* A location from the descriptor, and what the geometry says if it differs. */
static void put_where(struct dump *d, uint64_t stored, uint64_t expected)
{
	fprintf(d->out, "%" PRIu64, stored);
	if (stored != expected)
		fprintf(d->out, " (geometry says %" PRIu64 ")", expected);
}

static void put_run(struct dump *d, uint64_t first, uint64_t last, int *any)
{
	if (d->json) {
		j_range(&d->j, NULL, first, last);
		return;
	}
	fprintf(d->out, "%s%" PRIu64, *any ? ", " : "", first);
	if (last != first)
		fprintf(d->out, "-%" PRIu64, last);
	*any = 1;
}

/*
 * Runs of free resources n in [first, last] as the bitmap shows them:
 * "100-4095, 4100" in text, [[100, 4095], [4100, 4100]] in JSON.
 */
static void show_free(struct dump *d, const char *label, const char *key,
		      enum sufs_bitmap which, uint64_t first, uint64_t last)
{
	uint64_t n, run = 0;
	int in_run = 0, any = 0, used, rc = 0;

	if (d->json)
		j_open(&d->j, key, '[');
	else
		fprintf(d->out, "  %s: ", label);
	for (n = first; n <= last; n++) {
		rc = sufs_bitmap_test(d->fs, which, n, &used);
		if (rc)
			break;
		if (!used) {
			if (!in_run)
				run = n;
			in_run = 1;
		} else if (in_run) {
			put_run(d, run, n - 1, &any);
			in_run = 0;
		}
	}
	if (in_run)
		put_run(d, run, n - 1, &any);
	if (d->json) {
		j_close(&d->j, ']');
	} else {
		if (rc)
			fprintf(d->out, "%s(unreadable: %s)", any ? ", " : "", sufs_strerror(rc));
		else if (!any)
			fputs("(none)", d->out);
		fputc('\n', d->out);
	}
	if (rc)
		read_error(d, which == SUFS_BITMAP_BLOCK ? "bitmap bit of block"
							 : "bitmap bit of inode", n, rc);
}

static void show_group_text(struct dump *d, const struct group_info *gi)
{
	const struct sufs_group_layout *l = &gi->l;
	const struct sufs_group *gd = &gi->gd;
	uint32_t ipg = d->sb->inodes_per_group;

	fprintf(d->out, "\nGroup %" PRIu32 ": (Blocks %" PRIu64 "-%" PRIu64 ") checksum ", gi->g,
		l->start, l->end - 1);
	put_checksum_status(d, gi);
	fputc('\n', d->out);
	if (gi->g == 0) {
		fprintf(d->out, "  Primary superblock at %" PRIu64 ", Group descriptors at %" PRIu64
			"-%" PRIu64 "\n", l->sb_block, l->gdt_start, l->gdt_start + l->gdt_blocks - 1);
	} else if (gi->backup) {
		fprintf(d->out, "  Backup superblock at %" PRIu64 ", checksum %s\n", l->sb_block,
			gi->backup_ok > 0 ? "ok" : gi->backup_ok == 0 ? "BAD" : "unreadable");
	}
	fputs("  Block bitmap at ", d->out);
	put_where(d, gd->block_bitmap, l->block_bitmap);
	fputs(", Inode bitmap at ", d->out);
	put_where(d, gd->inode_bitmap, l->inode_bitmap);
	fputs("\n  Inode table at ", d->out);
	put_where(d, gd->inode_table, l->inode_table);
	fprintf(d->out, "-%" PRIu64 "\n", itable_last(gi));
	fprintf(d->out, "  %" PRIu32 " free blocks, %" PRIu32 " free inodes, %" PRIu32
		" directories", gd->free_blocks, gd->free_inodes, gd->used_dirs);
	if (gd->flags)
		fprintf(d->out, ", flags 0x%" PRIx32, gd->flags);
	fputc('\n', d->out);
	show_free(d, "Free blocks", "free_blocks_list", SUFS_BITMAP_BLOCK, l->start, l->end - 1);
	show_free(d, "Free inodes", "free_inodes_list", SUFS_BITMAP_INODE,
		  (uint64_t)gi->g * ipg + 1, (uint64_t)gi->g * ipg + ipg);
}

static void show_group_json(struct dump *d, const struct group_info *gi, int with_free)
{
	const struct sufs_group_layout *l = &gi->l;
	const struct sufs_group *gd = &gi->gd;
	struct json *j = &d->j;
	uint32_t ipg = d->sb->inodes_per_group;

	j_open(j, NULL, '{');
	j_u64(j, "group", gi->g);
	j_u64(j, "first_block", l->start);
	j_u64(j, "last_block", l->end - 1);
	if (l->sb_block != UINT64_MAX) {
		j_u64(j, "superblock", l->sb_block);
		if (gi->backup)
			j_bool(j, "superblock_checksum_ok", gi->backup_ok > 0);
	}
	if (l->gdt_start != UINT64_MAX)
		j_range(j, "group_descriptors", l->gdt_start, l->gdt_start + l->gdt_blocks - 1);
	j_u64(j, "block_bitmap", gd->block_bitmap);
	j_u64(j, "inode_bitmap", gd->inode_bitmap);
	j_range(j, "inode_table", gd->inode_table, itable_last(gi));
	j_bool(j, "locations_ok", gd->block_bitmap == l->block_bitmap &&
				  gd->inode_bitmap == l->inode_bitmap &&
				  gd->inode_table == l->inode_table);
	j_u64(j, "free_blocks", gd->free_blocks);
	j_u64(j, "free_inodes", gd->free_inodes);
	j_u64(j, "used_dirs", gd->used_dirs);
	j_u64(j, "flags", gd->flags);
	j_u64(j, "checksum", gd->checksum);
	j_u64(j, "checksum_computed", gi->computed);
	j_bool(j, "checksum_ok", !gi->csum_bad);
	if (with_free) {
		show_free(d, "Free blocks", "free_blocks_list", SUFS_BITMAP_BLOCK, l->start,
			  l->end - 1);
		show_free(d, "Free inodes", "free_inodes_list", SUFS_BITMAP_INODE,
			  (uint64_t)gi->g * ipg + 1, (uint64_t)gi->g * ipg + ipg);
	}
	j_close(j, '}');
}

#define GROUP_LINE_FMT "%-6s %-17s %11s %11s %6s %12s %12s %-17s %s\n"

static void show_group_line(struct dump *d, const struct group_info *gi)
{
	char g[16], blocks[48], fb[16], fi[16], dirs[16], bb[24], ib[24], it[48];
	const struct sufs_group *gd = &gi->gd;

	snprintf(g, sizeof(g), "%" PRIu32, gi->g);
	snprintf(blocks, sizeof(blocks), "%" PRIu64 "-%" PRIu64, gi->l.start, gi->l.end - 1);
	snprintf(fb, sizeof(fb), "%" PRIu32, gd->free_blocks);
	snprintf(fi, sizeof(fi), "%" PRIu32, gd->free_inodes);
	snprintf(dirs, sizeof(dirs), "%" PRIu32, gd->used_dirs);
	snprintf(bb, sizeof(bb), "%" PRIu64, gd->block_bitmap);
	snprintf(ib, sizeof(ib), "%" PRIu64, gd->inode_bitmap);
	snprintf(it, sizeof(it), "%" PRIu64 "-%" PRIu64, gd->inode_table, itable_last(gi));
	fprintf(d->out, GROUP_LINE_FMT, g, blocks, fb, fi, dirs, bb, ib, it,
		gi->csum_bad ? "BAD" : "ok");
}

static void show_groups(struct dump *d, enum show show)
{
	struct group_info gi;
	uint32_t g;

	if (d->json)
		j_open(&d->j, "groups", '[');
	else if (show == SHOW_GROUPS)
		fprintf(d->out, GROUP_LINE_FMT, "group", "blocks", "free_blocks", "free_inodes",
			"dirs", "block_bitmap", "inode_bitmap", "inode_table", "checksum");
	for (g = 0; g < d->sb->groups_count; g++) {
		check_group(d, g, &gi);
		if (!gi.gd_ok)
			continue;
		if (d->json)
			show_group_json(d, &gi, show == SHOW_ALL);
		else if (show == SHOW_GROUPS)
			show_group_line(d, &gi);
		else
			show_group_text(d, &gi);
	}
	if (d->json)
		j_close(&d->j, ']');
}

/* ---- inodes and directory blocks ---------------------------------------------------- */

/* Check one directory block: the tail must be what sealing it would write. */
static int check_dirblock(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			  int level, int bad, void *arg)
{
	struct dump *d = arg;
	uint32_t bs = d->sb->block_size;
	struct problem p = { .kind = P_DIRBLOCK, .ino = ino, .block = pblk, .lblk = lblk };
	int rc;

	if (level != 0 || bad)
		return 0;
	rc = sufs_block_read(fs, pblk, d->block);
	if (rc) {
		read_error(d, "directory block", pblk, rc);
		return 0;
	}
	d->n_dirblocks++;
	memcpy(d->copy, d->block, bs);
	sufs_dirblock_seal(d->copy, bs, pblk);
	if (memcmp(d->copy, d->block, bs) != 0) {
		p.stored = le32(d->block + bs - 4);
		p.computed = le32(d->copy + bs - 4);
		problem(d, &p);
	}
	return 0;
}

/* Check an inode's attribute block: its checksum, as sealing it would
 * write it (a pointer out of range is fsck's to report). */
static void check_xattrblock(struct dump *d, uint32_t ino, uint64_t blk)
{
	uint32_t bs = d->sb->block_size;
	struct problem p = { .kind = P_XATTRBLOCK, .ino = ino, .block = blk };
	int rc;

	if (!blk || blk >= d->sb->blocks_count)
		return;
	rc = sufs_block_read(d->fs, blk, d->block);
	if (rc) {
		read_error(d, "attribute block", blk, rc);
		return;
	}
	d->n_xattrblocks++;
	p.stored = le32(d->block + bs - 4);
	p.computed = sufs_xattr_csum(d->block, bs, blk);
	if (p.stored != p.computed)
		problem(d, &p);
}

/*
 * Check inode ino (which the caller read into *in, with result rc) and, for
 * a directory, its blocks; its attribute block, if any.
 */
static void check_inode(struct dump *d, uint32_t ino, const struct sufs_inode *in, int rc)
{
	struct problem p = { .kind = P_INODE, .ino = ino };

	if (rc && rc != -SUFS_ECHECKSUM) {
		read_error(d, "inode", ino, rc);
		return;
	}
	d->n_inodes++;
	if (rc) {
		p.stored = in->checksum;
		p.computed = inode_csum_computed(d, ino);
		problem(d, &p);
	}
	check_xattrblock(d, ino, in->xattr_block);
	if ((in->mode & S_IFMT) == S_IFDIR) {
		/* a walk the inode's own checksum stops is reported already */
		int wrc = sufs_block_iterate(d->fs, ino, check_dirblock, d);
		if (wrc && wrc != -SUFS_ECHECKSUM)
			read_error(d, "blocks of directory inode", ino, wrc);
	}
}

/* Every inode the inode bitmap marks in use. */
static void check_inodes(struct dump *d)
{
	struct sufs_inode in;
	uint32_t ino;
	int used, rc;

	for (ino = 1; ino <= d->sb->inodes_count; ino++) {
		rc = sufs_bitmap_test(d->fs, SUFS_BITMAP_INODE, ino, &used);
		if (rc) {
			read_error(d, "inode bitmap bit of inode", ino, rc);
			continue;
		}
		if (!used)
			continue;
		rc = sufs_inode_get(d->fs, ino, &in);
		check_inode(d, ino, &in, rc);
	}
}

static void show_checked(struct dump *d)
{
	if (d->json) {
		j_open(&d->j, "checked", '{');
		j_u64(&d->j, "superblocks", d->n_super);
		j_u64(&d->j, "group_descriptors", d->n_groups);
		j_u64(&d->j, "inodes", d->n_inodes);
		j_u64(&d->j, "directory_blocks", d->n_dirblocks);
		j_u64(&d->j, "attribute_blocks", d->n_xattrblocks);
		j_close(&d->j, '}');
		return;
	}
	fprintf(d->out, "\nChecksums checked: superblocks %" PRIu64 ", group descriptors %" PRIu64
		", inodes %" PRIu64 ", directory blocks %" PRIu64 ", attribute blocks %" PRIu64 "\n",
		d->n_super, d->n_groups, d->n_inodes, d->n_dirblocks, d->n_xattrblocks);
	fprintf(d->out, "Checksum failures: %zu\n", d->nproblems);
}

/* ---- one inode ------------------------------------------------------------------------ */

/* The JSON's keys for the types; the text's names are every program's
 * (type_name()). */
static const struct {
	uint32_t fmt;
	const char *key;
} types[] = {
	{ S_IFREG, "regular" },
	{ S_IFDIR, "directory" },
	{ S_IFLNK, "symlink" },
	{ S_IFCHR, "chardev" },
	{ S_IFBLK, "blockdev" },
	{ S_IFIFO, "fifo" },
	{ S_IFSOCK, "socket" },
};

static void type_names(uint32_t mode, const char **key, const char **text)
{
	size_t i;

	*key = *text = mode ? "unknown" : "none";
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if ((mode & S_IFMT) == types[i].fmt) {
			*key = types[i].key;
			*text = type_name(mode);
		}
	}
}

static void show_itime(struct dump *d, const char *name, int64_t sec, uint32_t nsec)
{
	char key[16];

	if (d->json) {
		j_i64(&d->j, name, sec);
		snprintf(key, sizeof(key), "%s_ns", name);
		j_u64(&d->j, key, nsec);
		return;
	}
	fprintf(d->out, "%s:%*s", name, (int)(7 - strlen(name)), "");
	put_time(d->out, sec, nsec, 1);
	fputc('\n', d->out);
}

/* A run of the block map: consecutive logical blocks at consecutive
 * physical blocks, of one level. */
struct extent {
	uint64_t lblk, pblk, count;
	int level, bad;
};

struct map_walk {
	struct dump *d;
	struct extent cur;
	int have;
	size_t col;                /* text: characters on the current line */
	uint64_t total;
};

static void put_extent(struct map_walk *w)
{
	static const char *const ind[] = { "", "IND", "DIND", "TIND" };
	const struct extent *e = &w->cur;
	struct dump *d = w->d;
	char s[96];
	int n;

	if (d->json) {
		j_open(&d->j, NULL, '{');
		j_u64(&d->j, "level", (uint64_t)e->level);
		j_u64(&d->j, "lblk", e->lblk);
		j_u64(&d->j, "pblk", e->pblk);
		j_u64(&d->j, "count", e->count);
		if (e->bad)
			j_bool(&d->j, "bad", 1);
		j_close(&d->j, '}');
		return;
	}
	if (e->level)
		n = snprintf(s, sizeof(s), "(%s):", ind[e->level]);
	else if (e->count == 1)
		n = snprintf(s, sizeof(s), "(%" PRIu64 "):", e->lblk);
	else
		n = snprintf(s, sizeof(s), "(%" PRIu64 "-%" PRIu64 "):", e->lblk,
			     e->lblk + e->count - 1);
	if (e->bad)
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%" PRIu64 " (out of range)", e->pblk);
	else if (e->count == 1)
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%" PRIu64, e->pblk);
	else
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%" PRIu64 "-%" PRIu64, e->pblk,
			      e->pblk + e->count - 1);
	if (w->col && w->col + (size_t)n + 2 > 78) {
		fputs(",\n ", d->out);
		w->col = 1;
	} else if (w->col) {
		fputs(", ", d->out);
		w->col += 2;
	} else {
		fputc(' ', d->out);
		w->col = 1;
	}
	fputs(s, d->out);
	w->col += (size_t)n;
}

static int map_block(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		     int bad, void *arg)
{
	struct map_walk *w = arg;
	struct extent *e = &w->cur;

	w->total++;
	if (w->have && !bad && !e->bad && level == 0 && e->level == 0 &&
	    lblk == e->lblk + e->count && pblk == e->pblk + e->count) {
		e->count++;
		return 0;
	}
	if (w->have)
		put_extent(w);
	e->lblk = lblk;
	e->pblk = pblk;
	e->count = 1;
	e->level = level;
	e->bad = bad;
	w->have = 1;
	return 0;
}

static void show_mapped(struct dump *d, uint32_t ino)
{
	struct map_walk w = { .d = d };
	int rc;

	if (d->json)
		j_open(&d->j, "mapped", '[');
	else
		fputs("Mapped blocks:", d->out);
	rc = sufs_block_iterate(d->fs, ino, map_block, &w);
	if (w.have)
		put_extent(&w);
	if (d->json) {
		j_close(&d->j, ']');
	} else {
		if (rc)
			fprintf(d->out, "%s(walk stopped: %s)", w.col ? ", " : " ",
				sufs_strerror(rc));
		else if (!w.total)
			fputs(" (none)", d->out);
		fputc('\n', d->out);
	}
	if (rc && rc != -SUFS_ECHECKSUM)
		read_error(d, "blocks of inode", ino, rc);
}

static void show_pointers(struct dump *d, const struct sufs_inode *in)
{
	unsigned i;

	if (d->json) {
		j_sep(&d->j, "block");
		for (i = 0; i < SUFS_NBLOCKS; i++)
			fprintf(d->j.f, "%s%" PRIu64, i ? ", " : "[", in->block[i]);
		fputc(']', d->j.f);
		return;
	}
	fputs("Block pointers:", d->out);
	for (i = 0; i < SUFS_NDIR; i++)
		fprintf(d->out, " %" PRIu64, in->block[i]);
	fprintf(d->out, "; indirect %" PRIu64 ", double %" PRIu64 ", triple %" PRIu64 "\n",
		in->block[SUFS_IND], in->block[SUFS_DIND], in->block[SUFS_TIND]);
}

/* A symlink's target: from the inode itself when it fits there (readable
 * even when the checksum fails), else through the library.  A slow
 * target that cannot be read leaves the output without it: a read error,
 * unlike a pointer out of range, which the mapped blocks show in full. */
static void show_symlink(struct dump *d, uint32_t ino, const struct sufs_inode *in)
{
	int fast = in->size <= SUFS_FAST_SYMLINK_MAX;
	char inline_target[SUFS_NBLOCKS * 8];
	char *target = inline_target;
	size_t len = 0, size = d->sb->block_size, i;
	int rc = 0;

	if (fast) {
		for (i = 0; i < sizeof(inline_target); i++)
			inline_target[i] = (char)(in->block[i / 8] >> (8 * (i % 8)));
		len = (size_t)in->size;
	} else {
		/* a slow symlink's target fills at most one block */
		target = (char *)d->copy;
		rc = sufs_readlink(d->fs, ino, target, size, &len);
	}
	if (d->json) {
		j_bool(&d->j, "fast_symlink", fast);
		if (!rc)
			j_str(&d->j, "target", target, len);
		else
			j_str(&d->j, "target_error", sufs_strerror(rc), strlen(sufs_strerror(rc)));
	} else {
		fprintf(d->out, "%s symlink target: ", fast ? "Fast" : "Slow");
		if (rc) {
			fprintf(d->out, "(unreadable: %s)\n", sufs_strerror(rc));
		} else {
			fputc('"', d->out);
			print_name(d->out, target, len);
			fputs("\"\n", d->out);
		}
	}
	if (rc && rc != -SUFS_ECHECKSUM)
		read_error(d, "symlink inode", ino, rc);
}

/* One attribute: text, or a JSON object (the value as a string, bytes
 * that are not UTF-8 escaped, and in hex). */
static void show_xattr(struct dump *d, const char *name, const uint8_t *v, size_t len)
{
	size_t i;

	if (d->json) {
		j_open(&d->j, NULL, '{');
		j_str(&d->j, "name", name, strlen(name));
		j_u64(&d->j, "size", len);
		j_str(&d->j, "value", (const char *)v, len);
		j_sep(&d->j, "value_hex");
		fputc('"', d->j.f);
		for (i = 0; i < len; i++)
			fprintf(d->j.f, "%02x", v[i]);
		fputc('"', d->j.f);
		j_close(&d->j, '}');
		return;
	}
	fputs("  ", d->out);
	print_name(d->out, name, strlen(name));
	fprintf(d->out, " (%zu) = \"", len);
	print_name(d->out, (const char *)v, len);
	fputs("\"\n", d->out);
}

/* An inode's extended attributes, as the library reads them (with every
 * privilege), and where they are. */
static void show_xattrs(struct dump *d, uint32_t ino, const struct sufs_inode *in)
{
	char *list = NULL, *name;
	uint8_t *value = malloc(SUFS_XATTR_SIZE_MAX);
	size_t len = 0, vlen;
	int rc = value ? sufs_listxattr(d->fs, ino, NULL, 0, &len, NULL) : -ENOMEM;

	if (!(d->sb->features_ro_compat & SUFS_FEATURE_RO_XATTR)) {
		free(value);
		return;
	}
	if (!rc && len && !(list = malloc(len)))
		rc = -ENOMEM;
	if (!rc && len)
		rc = sufs_listxattr(d->fs, ino, list, len, &len, NULL);
	if (d->json) {
		j_u64(&d->j, "xattr_block", in->xattr_block);
		j_open(&d->j, "xattrs", '[');
	} else {
		if (in->xattr_block)
			fprintf(d->out, "Attributes (in block %" PRIu64 "):\n", in->xattr_block);
		else if (len || rc)
			fputs("Attributes (in the inode):\n", d->out);
		else
			fputs("Attributes: none\n", d->out);
	}
	for (name = list; !rc && name && name < list + len; name += strlen(name) + 1) {
		rc = sufs_getxattr(d->fs, ino, name, value, SUFS_XATTR_SIZE_MAX, &vlen, NULL);
		if (!rc)
			show_xattr(d, name, value, vlen);
	}
	if (d->json)
		j_close(&d->j, ']');
	if (rc) {
		if (d->json)
			j_str(&d->j, "xattrs_error", sufs_strerror(rc), strlen(sufs_strerror(rc)));
		else
			fprintf(d->out, "  (unreadable: %s)\n", sufs_strerror(rc));
		read_error(d, "attributes of inode", ino, rc);
	}
	free(list);
	free(value);
}

static void show_inode(struct dump *d, uint32_t ino)
{
	struct sufs_inode in;
	const char *tkey, *ttext;
	uint32_t type;
	int used = 0, rc, brc;

	rc = sufs_inode_get(d->fs, ino, &in);
	if (rc && rc != -SUFS_ECHECKSUM) {
		read_error(d, "inode", ino, rc);
		return;
	}
	brc = sufs_bitmap_test(d->fs, SUFS_BITMAP_INODE, ino, &used);
	if (brc)
		read_error(d, "inode bitmap bit of inode", ino, brc);
	check_inode(d, ino, &in, rc);
	type = in.mode & S_IFMT;
	type_names(in.mode, &tkey, &ttext);

	if (d->json) {
		struct json *j = &d->j;
		char perm[8];
		snprintf(perm, sizeof(perm), "%04o", in.mode & 07777u);
		j_open(j, "inode", '{');
		j_u64(j, "ino", ino);
		j_bool(j, "in_use", used);
		j_str(j, "type", tkey, strlen(tkey));
		j_u64(j, "mode", in.mode);
		j_str(j, "perm", perm, strlen(perm));
		j_u64(j, "flags", in.flags);
		j_u64(j, "links", in.links);
		j_u64(j, "uid", in.uid);
		j_u64(j, "gid", in.gid);
		j_u64(j, "size", in.size);
		j_u64(j, "blocks", in.blocks);
		j_u64(j, "generation", in.generation);
	} else {
		fprintf(d->out, "Inode: %" PRIu32 "   Type: %s   Mode: %04o   Flags: 0x%" PRIx16 "\n",
			ino, ttext, in.mode & 07777u, in.flags);
		fprintf(d->out, "In use: %s   Links: %" PRIu32 "   Generation: %" PRIu32 "\n",
			used ? "yes" : "no", in.links, in.generation);
		fprintf(d->out, "UID: %" PRIu32 "   GID: %" PRIu32 "\n", in.uid, in.gid);
		fprintf(d->out, "Size: %" PRIu64 "   Blocks: %" PRIu64 "\n", in.size, in.blocks);
	}
	show_itime(d, "ctime", in.ctime, in.ctime_ns);
	show_itime(d, "atime", in.atime, in.atime_ns);
	show_itime(d, "mtime", in.mtime, in.mtime_ns);
	show_itime(d, "crtime", in.crtime, in.crtime_ns);
	if (type == S_IFCHR || type == S_IFBLK) {
		if (d->json) {
			j_u64(&d->j, "rdev_major", in.rdev_major);
			j_u64(&d->j, "rdev_minor", in.rdev_minor);
		} else {
			fprintf(d->out, "Device: %" PRIu32 ", %" PRIu32 "\n", in.rdev_major,
				in.rdev_minor);
		}
	}
	if (type == S_IFLNK)
		show_symlink(d, ino, &in);
	if (type != S_IFLNK || in.size > SUFS_FAST_SYMLINK_MAX) {
		show_pointers(d, &in);
		show_mapped(d, ino);
	}
	if (in.mode && (used || rc == 0)) /* a free inode has none to read */
		show_xattrs(d, ino, &in);
	if (d->json) {
		j_u64(&d->j, "checksum", in.checksum);
		j_u64(&d->j, "checksum_computed", rc == 0 ? in.checksum : inode_csum_computed(d, ino));
		j_bool(&d->j, "checksum_ok", rc == 0);
		j_close(&d->j, '}');
	} else {
		fprintf(d->out, "Checksum: 0x%08" PRIx32, in.checksum);
		if (rc == 0)
			fputs(" (ok)\n", d->out);
		else
			fprintf(d->out, " (BAD, computed 0x%08" PRIx32 ")\n",
				inode_csum_computed(d, ino));
	}
}

/* INODE is a number, or a path from the root when it starts with '/'. */
static int parse_inode_arg(struct dump *d, const char *arg, uint32_t *ino)
{
	int rc;

	if (arg[0] == '/') {
		rc = sufs_namei(d->fs, SUFS_ROOT_INO, arg, 0, ino);
		if (rc == -SUFS_ECHECKSUM) {
			/* the inode named may be the damaged one: find its number
			 * through its directory entry, without reading it */
			const char *name;
			uint32_t dir;
			size_t len;
			rc = sufs_namei_parent(d->fs, SUFS_ROOT_INO, arg, &dir, &name, &len);
			if (rc == 0)
				rc = sufs_lookup(d->fs, dir, name, len, ino);
		}
		if (rc) {
			errmsg("%s: %s: %s", shown(d->image), shown(arg), sufs_strerror(rc));
			return rc == -ENOENT || rc == -ENOTDIR ? EXIT_NOTFOUND : EXIT_IO;
		}
		return EXIT_OK;
	}
	if (parse_u32(arg, ino)) {
		errmsg("-i %s: neither an inode number nor a path (a path starts with /: -i /%s)",
		       shown(arg), shown(arg));
		return EXIT_USAGE;
	}
	if (*ino == 0 || *ino > d->sb->inodes_count) {
		errmsg("%s: no inode %s (inodes are numbered 1 to %" PRIu32 ")", shown(d->image),
		       shown(arg), d->sb->inodes_count);
		return EXIT_NOTFOUND;
	}
	return EXIT_OK;
}

/* ---- the program ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-h | -g | -i INODE] [--json] [-s BLOCK] IMAGE\n"
		"       %s -m OUT [-f] [-s BLOCK] IMAGE\n"
		"       %s --restore META [-f] IMAGE\n"
		"Show the superblock, groups and inodes of a sufs image and check every\n"
		"checksum on the way; save and restore metadata images.\n"
		"\n"
		"  -h, --header         the superblock only\n"
		"  -g, --groups         one line per group\n"
		"  -i, --inode INODE    one inode (a number, or a path that starts with /)\n"
		"      --json           JSON instead of text\n"
		"  -s, --superblock BLOCK\n"
		"                       read the backup superblock at block BLOCK (or\n"
		"                       BLOCK:BLOCKSIZE) instead of the primary\n"
		"  -m, --metadata OUT   save the metadata of IMAGE, compressed, to the new file OUT\n"
		"      --restore META   make the sparse raw image IMAGE from the metadata image META\n"
		"  -f, --force          let -m and --restore overwrite an existing file\n"
		"      --help           show this help and exit\n"
		"  -V, --version        show the version and exit\n"
		"\n"
		"Exit status: 0 all checksums good, 1 usage error, 2 the image cannot be used,\n"
		"3 no such inode, 4 checksum failures found, 8 another file cannot be used,\n"
		"16 a read failed.  See sufs-dump(8).\n",
		prog, prog, prog);
}

static int run_dump(const char *image, uint64_t sb_offset, enum show show,
		    const char *inode_arg, int json)
{
	struct dump d = { .image = image, .sb_offset = sb_offset, .out = stdout, .json = json };
	uint32_t ino = 0;
	int rc, ok;
	uint32_t stored, computed;

	ctl_warn_if_live(image); /* what is read may be out of date */
	rc = open_image(image, SUFS_OPEN_IGNORE_CSUM, sb_offset, &d.fs);
	if (rc) {
		errmsg("%s: %s", shown(image), open_error(image, rc));
		return EXIT_IMAGE;
	}
	d.sb = sufs_get_super(d.fs);
	d.block = malloc(d.sb->block_size);
	d.copy = malloc(d.sb->block_size);
	d.j.f = stdout;
	if (!d.block || !d.copy) {
		errmsg("%s", strerror(ENOMEM));
		rc = EXIT_IO;
		goto out;
	}
	if (show == SHOW_INODE && (rc = parse_inode_arg(&d, inode_arg, &ino)) != EXIT_OK)
		goto out;
	if (json)
		j_open(&d.j, NULL, '{');
	if (show == SHOW_ALL || show == SHOW_HEADER)
		show_super(&d);
	else
		check_super(&d, &ok, &stored, &computed);
	if (show == SHOW_ALL || show == SHOW_GROUPS) {
		show_groups(&d, show);
		check_inodes(&d);
	}
	if (show == SHOW_INODE)
		show_inode(&d, ino);
	if (show == SHOW_ALL)
		show_checked(&d);
	if (json) {
		json_problems(&d);
		j_close(&d.j, '}');
	}
	rc = d.read_errors ? EXIT_IO : d.nproblems ? EXIT_FAILED : EXIT_OK;
out:
	if (fflush(stdout) != 0 || ferror(stdout)) {
		errmsg("standard output: %s", strerror(errno));
		rc = EXIT_FILE;
	}
	sufs_close(d.fs);
	free(d.block);
	free(d.copy);
	free(d.gdt);
	free(d.problems);
	return rc;
}

static int run_save(const char *image, uint64_t sb_offset, const char *out, int force)
{
	struct sufs_fs *fs;
	int rc;

	ctl_warn_if_live(image);
	rc = open_image(image, SUFS_OPEN_IGNORE_CSUM, sb_offset, &fs);
	if (rc) {
		errmsg("%s: %s", shown(image), open_error(image, rc));
		return EXIT_IMAGE;
	}
	rc = metaimage_save(fs, image, out, force);
	sufs_close(fs);
	return rc;
}

enum { OPT_JSON = 256, OPT_RESTORE, OPT_HELP, OPT_VERSION };

static const char *show_option(enum show show)
{
	return show == SHOW_HEADER ? "-h" : show == SHOW_GROUPS ? "-g" : "-i";
}

/*
 * -h, -g or -i: *show becomes want, or -1 after a message.  Given again,
 * -h and -g ask for the same thing; a second -i would be a second inode.
 */
static int choose_show(enum show *show, enum show want)
{
	if (*show == SHOW_ALL || (*show == want && want != SHOW_INODE)) {
		*show = want;
		return 0;
	}
	if (*show == want)
		errmsg("-i is given twice: one inode at a time");
	else
		errmsg("%s and %s exclude each other", show_option(*show), show_option(want));
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "header", no_argument, NULL, 'h' },
		{ "groups", no_argument, NULL, 'g' },
		{ "inode", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "metadata", required_argument, NULL, 'm' },
		{ "restore", required_argument, NULL, OPT_RESTORE },
		{ "force", no_argument, NULL, 'f' },
		{ "superblock", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	enum show show = SHOW_ALL;
	const char *inode_arg = NULL, *meta_out = NULL, *restore = NULL, *sb_arg = NULL;
	uint64_t sb_offset = 0;
	int json = 0, force = 0, c, rc;

	prog_init("sufs-dump", argv);
	while ((c = getopt_long(argc, argv, "hgi:m:fs:V", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			if (choose_show(&show, SHOW_HEADER))
				return EXIT_USAGE;
			break;
		case 'g':
			if (choose_show(&show, SHOW_GROUPS))
				return EXIT_USAGE;
			break;
		case 'i':
			if (choose_show(&show, SHOW_INODE))
				return EXIT_USAGE;
			inode_arg = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case 'm':
			if (meta_out) {
				errmsg("-m is given twice: one output file");
				return EXIT_USAGE;
			}
			meta_out = optarg;
			break;
		case OPT_RESTORE:
			if (restore) {
				errmsg("--restore is given twice: one metadata image at a time");
				return EXIT_USAGE;
			}
			restore = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 's':
			sb_arg = optarg;
			break;
		case OPT_HELP:
			usage(stdout);
			return EXIT_OK;
		case OPT_VERSION:
		case 'V':
			print_version();
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		errmsg(optind < argc ? "too many arguments" : "no image given");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (meta_out && restore) {
		errmsg("-m and --restore exclude each other");
		return EXIT_USAGE;
	}
	if ((meta_out || restore) && (show != SHOW_ALL || json)) {
		errmsg("%s takes no -h, -g, -i or --json", meta_out ? "-m" : "--restore");
		return EXIT_USAGE;
	}
	if (force && !meta_out && !restore) {
		errmsg("-f goes with -m or --restore");
		return EXIT_USAGE;
	}
	if (sb_arg && restore) {
		errmsg("--restore takes no -s: it makes IMAGE");
		return EXIT_USAGE;
	}
	if (sb_arg && (rc = sb_option(argv[optind], sb_arg, &sb_offset)) != EXIT_OK)
		return rc;
	if (meta_out)
		return run_save(argv[optind], sb_offset, meta_out, force);
	if (restore)
		return metaimage_restore(restore, argv[optind], force);
	return run_dump(argv[optind], sb_offset, show, inode_arg, json);
}
