/*
 * edit.c - sufs-debug's editing commands (with -w): precise damage, made by
 * naming a field, in the manner of debugfs's set_super_value,
 * set_inode_field, set_block_group, setb/freeb/seti/freei, clri and
 * zap_block; and set_dirent for directory entries.
 *
 * What they change.  Exactly the bytes named, nothing that follows from
 * them: setting a bitmap bit leaves the free counts alone, setting a link
 * count touches no name, clri leaves the inode's bitmap bit set.  fsck.sufs
 * then finds exactly one thing wrong.  The one exception is the checksum
 * of the record changed (superblock, group descriptor, inode, directory
 * block): every edit computes it again, so that the damage is the field
 * and not also the checksum, unless the field set is the checksum itself,
 * which is written as given ("calc" computes it).  zap_block and the
 * bitmaps have no checksum to keep.
 *
 * Where the bytes go.  Inodes, bitmaps, directory blocks and any other
 * block are written raw through the library's cache (sufs_block_write),
 * with everything pending written back first (so the block holds nothing
 * the library still has to seal) and again after (so that the library
 * later takes the block up in its own role, checking it as it reads it).
 * The superblock and the group descriptor table are the exception: the
 * library keeps them decoded in memory and writes them itself, at sync and
 * at close, over whatever was there.  Edits of them (set_super_value,
 * set_bg, zap_block of a block before group 0's bitmaps) are therefore
 * kept in a list, shown by `super` and `groups` (edit_super_view,
 * edit_group_view), and made on the image after the library has closed it
 * (edit_finish), where they stay.
 */
#include "config.h"

#include "commands.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */

enum field_type {
	F_UINT,                    /* unsigned, little-endian, 1 to 8 bytes */
	F_INT,                     /* signed (times) */
	F_CSUM,                    /* the record's checksum: a u32, or "calc" */
	F_UUID,                    /* 16 bytes, written as 8-4-4-4-12 hex digits */
	F_STRING,                  /* NUL-padded bytes */
};

/* A field of an on-disk record, at the offsets of sufs(5).  An array's
 * name ends in "[]" before any member name: "block[]", "snap[].time". */
struct field {
	const char *name;
	const char *alias;         /* debugfs's name, or NULL */
	uint32_t off;
	uint32_t size;             /* bytes (of one element) */
	enum field_type type;
	uint32_t count;            /* elements of an array, 0 for a scalar */
	uint32_t stride;           /* bytes from one element to the next */
};

#define SB_CSUM_OFF 1020u
#define GD_CSUM_OFF 60u
#define IN_CSUM_OFF 252u

static const struct field super_fields[] = {
	{ "magic", NULL, 0, 4, F_UINT, 0, 0 },
	{ "version", NULL, 4, 4, F_UINT, 0, 0 },
	{ "block_size", NULL, 8, 4, F_UINT, 0, 0 },
	{ "inode_size", NULL, 12, 4, F_UINT, 0, 0 },
	{ "blocks_count", NULL, 16, 8, F_UINT, 0, 0 },
	{ "free_blocks", "free_blocks_count", 24, 8, F_UINT, 0, 0 },
	{ "inodes_count", NULL, 32, 4, F_UINT, 0, 0 },
	{ "free_inodes", "free_inodes_count", 36, 4, F_UINT, 0, 0 },
	{ "blocks_per_group", NULL, 40, 4, F_UINT, 0, 0 },
	{ "inodes_per_group", NULL, 44, 4, F_UINT, 0, 0 },
	{ "groups_count", NULL, 48, 4, F_UINT, 0, 0 },
	{ "gdt_blocks", NULL, 52, 4, F_UINT, 0, 0 },
	{ "root_ino", NULL, 56, 4, F_UINT, 0, 0 },
	{ "first_ino", NULL, 60, 4, F_UINT, 0, 0 },
	{ "state", NULL, 64, 4, F_UINT, 0, 0 },
	{ "flags", NULL, 68, 4, F_UINT, 0, 0 },
	{ "write_mode", NULL, 72, 4, F_UINT, 0, 0 },
	{ "mount_count", "mnt_count", 76, 4, F_UINT, 0, 0 },
	{ "mkfs_time", NULL, 80, 8, F_INT, 0, 0 },
	{ "mount_time", "mtime", 88, 8, F_INT, 0, 0 },
	{ "write_time", "wtime", 96, 8, F_INT, 0, 0 },
	{ "check_time", "lastcheck", 104, 8, F_INT, 0, 0 },
	{ "uuid", NULL, 112, 16, F_UUID, 0, 0 },
	{ "label", "volume_name", 128, 64, F_STRING, 0, 0 },
	{ "sb_group", NULL, 192, 4, F_UINT, 0, 0 },
	{ "features_compat", "feature_compat", 196, 4, F_UINT, 0, 0 },
	{ "features_incompat", "feature_incompat", 200, 4, F_UINT, 0, 0 },
	{ "features_ro_compat", "feature_ro_compat", 204, 4, F_UINT, 0, 0 },
	{ "check_result", NULL, 208, 4, F_UINT, 0, 0 },
	{ "default_mode", NULL, 212, 4, F_UINT, 0, 0 },
	{ "snap[].ino", NULL, 256, 4, F_UINT, SUFS_SNAP_SLOTS, 32 },
	{ "snap[].flags", NULL, 260, 4, F_UINT, SUFS_SNAP_SLOTS, 32 },
	{ "snap[].time", NULL, 264, 8, F_INT, SUFS_SNAP_SLOTS, 32 },
	{ "checksum", NULL, SB_CSUM_OFF, 4, F_CSUM, 0, 0 },
	{ NULL, NULL, 0, 0, F_UINT, 0, 0 }
};

static const struct field group_fields[] = {
	{ "free_blocks", "free_blocks_count", 0, 4, F_UINT, 0, 0 },
	{ "free_inodes", "free_inodes_count", 4, 4, F_UINT, 0, 0 },
	{ "used_dirs", "used_dirs_count", 8, 4, F_UINT, 0, 0 },
	{ "flags", NULL, 12, 4, F_UINT, 0, 0 },
	{ "block_bitmap", NULL, 16, 8, F_UINT, 0, 0 },
	{ "inode_bitmap", NULL, 24, 8, F_UINT, 0, 0 },
	{ "inode_table", NULL, 32, 8, F_UINT, 0, 0 },
	{ "checksum", NULL, GD_CSUM_OFF, 4, F_CSUM, 0, 0 },
	{ NULL, NULL, 0, 0, F_UINT, 0, 0 }
};

static const struct field inode_fields[] = {
	{ "mode", NULL, 0, 2, F_UINT, 0, 0 },
	{ "flags", NULL, 2, 2, F_UINT, 0, 0 },
	{ "links", "links_count", 4, 4, F_UINT, 0, 0 },
	{ "uid", NULL, 8, 4, F_UINT, 0, 0 },
	{ "gid", NULL, 12, 4, F_UINT, 0, 0 },
	{ "size", NULL, 16, 8, F_UINT, 0, 0 },
	{ "blocks", "blocks_count", 24, 8, F_UINT, 0, 0 },
	{ "atime", NULL, 32, 8, F_INT, 0, 0 },
	{ "mtime", NULL, 40, 8, F_INT, 0, 0 },
	{ "ctime", NULL, 48, 8, F_INT, 0, 0 },
	{ "crtime", NULL, 56, 8, F_INT, 0, 0 },
	{ "atime_ns", "atime_extra", 64, 4, F_UINT, 0, 0 },
	{ "mtime_ns", "mtime_extra", 68, 4, F_UINT, 0, 0 },
	{ "ctime_ns", "ctime_extra", 72, 4, F_UINT, 0, 0 },
	{ "crtime_ns", "crtime_extra", 76, 4, F_UINT, 0, 0 },
	{ "generation", NULL, 80, 4, F_UINT, 0, 0 },
	{ "rdev_major", NULL, 84, 4, F_UINT, 0, 0 },
	{ "rdev_minor", NULL, 88, 4, F_UINT, 0, 0 },
	{ "block[]", NULL, 96, 8, F_UINT, SUFS_NBLOCKS, 8 },
	{ "xattr_block", "file_acl", 216, 8, F_UINT, 0, 0 },
	{ "xattr[]", NULL, 224, 1, F_UINT, SUFS_XATTR_INLINE, 1 },
	{ "checksum", NULL, IN_CSUM_OFF, 4, F_CSUM, 0, 0 },
	{ NULL, NULL, 0, 0, F_UINT, 0, 0 }
};

/* Directory entry fields: the header of sufs(5), and the name. */
static const struct field dirent_fields[] = {
	{ "inode", "ino", 0, 4, F_UINT, 0, 0 },
	{ "rec_len", "reclen", 4, 2, F_UINT, 0, 0 },
	{ "name_len", "namelen", 6, 1, F_UINT, 0, 0 },
	{ "file_type", "ftype", 7, 1, F_UINT, 0, 0 },
	{ "name", NULL, SUFS_DIRENT_HDR, SUFS_NAME_MAX, F_STRING, 0, 0 },
	{ NULL, NULL, 0, 0, F_UINT, 0, 0 }
};

/* A field named, and which element of an array. */
struct field_ref {
	const struct field *f;
	uint32_t idx;
	uint32_t off;              /* of the element in the record */
};

static int same_name(const char *table_name, const char *want)
{
	return table_name && strcmp(table_name, want) == 0;
}

/* An array's name given without its index: "block" for "block[]". */
static int same_name_unindexed(const char *table_name, const char *want)
{
	const char *br = strstr(table_name, "[]");
	size_t n = br ? (size_t)(br - table_name) : 0;

	return br && strncmp(table_name, want, n) == 0 && strcmp(want + n, br + 2) == 0;
}

/* "name", "name[N]" or "name[N].member"; for block[] also IND, DIND, TIND. */
static int find_field(const struct field *table, const char *text, struct field_ref *r,
		      const char **why)
{
	const char *open = strchr(text, '['), *close;
	char key[64], index[16];
	const struct field *f;
	uint32_t idx = 0;
	size_t n;

	*why = "no such field (-l lists them)";
	if (strlen(text) >= sizeof(key) - 2)
		return -1;
	if (open) {
		close = strchr(open, ']');
		n = close ? (size_t)(close - open - 1) : 0;
		if (!close || n == 0 || n >= sizeof(index))
			return -1;
		memcpy(index, open + 1, n);
		index[n] = '\0';
		/* the key: the name with its index taken out */
		snprintf(key, sizeof(key), "%.*s[]%s", (int)(open - text), text, close + 1);
		if (strcmp(index, "IND") == 0 || strcmp(index, "DIND") == 0 ||
		    strcmp(index, "TIND") == 0) {
			if (strncmp(text, "block[", 6) != 0)
				return -1;
			idx = index[0] == 'I' ? SUFS_IND : index[0] == 'D' ? SUFS_DIND : SUFS_TIND;
		} else if (parse_u32(index, &idx)) {
			*why = *index && strspn(index, "0123456789") == strlen(index)
				       ? "the index is out of range"
				       : "the index is not a number";
			return -1;
		}
	} else {
		snprintf(key, sizeof(key), "%s", text);
	}
	for (f = table; f->name; f++) {
		if (!same_name(f->name, key) && !same_name(f->alias, key) &&
		    !(!open && same_name_unindexed(f->name, key)) &&
		    !(open && !f->count && strlen(f->name) == (size_t)(open - text) &&
		      strncmp(f->name, text, (size_t)(open - text)) == 0))
			continue;
		if (!f->count != !open) {
			*why = f->count ? "the field is an array: give an index, as in block[3]"
					: "the field is not an array";
			return -1;
		}
		if (f->count && idx >= f->count) {
			*why = "the index is out of range";
			return -1;
		}
		r->f = f;
		r->idx = idx;
		r->off = f->off + idx * f->stride;
		return 0;
	}
	return -1;
}

static const char *type_text(const struct field *f, char *buf, size_t size)
{
	switch (f->type) {
	case F_UINT:
		snprintf(buf, size, "unsigned integer (%u bits)", 8 * f->size);
		break;
	case F_INT:
		snprintf(buf, size, "signed integer (%u bits)", 8 * f->size);
		break;
	case F_CSUM:
		snprintf(buf, size, "checksum (a number, or calc)");
		break;
	case F_UUID:
		snprintf(buf, size, "uuid");
		break;
	case F_STRING:
		snprintf(buf, size, "string (at most %u bytes)", f->size);
		break;
	}
	return buf;
}

/* -l: the fields, as debugfs lists them. */
static void list_fields(const char *what, const struct field *table)
{
	const struct field *f;
	char type[48], name[64];

	printf("%s fields supported by this command:\n", what);
	for (f = table; f->name; f++) {
		const char *br = strstr(f->name, "[]");
		if (br)
			snprintf(name, sizeof(name), "%.*s[0-%u]%s", (int)(br - f->name), f->name,
				 f->count - 1, br + 2);
		else
			snprintf(name, sizeof(name), "%s", f->name);
		printf("\t%-24s%s", name, type_text(f, type, sizeof(type)));
		if (f->alias)
			printf("  (also %s)", f->alias);
		putchar('\n');
	}
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/* The value, as the bytes of the field; *seal says whether the record's
 * checksum is to be computed after the edit (not when the checksum itself
 * is given). */
struct value {
	uint8_t bytes[SUFS_NAME_MAX + 1];
	uint32_t len;
	int seal;
};

/* strtoull/strtoll with base 0 (0x hex, leading 0 octal), all of s. */
static int parse_number(const char *s, int is_signed, uint64_t *u, int64_t *i)
{
	char *end;

	if (!*s || isspace((unsigned char)*s) || (!is_signed && *s == '-') || *s == '+')
		return -1;
	errno = 0;
	if (is_signed)
		*i = strtoll(s, &end, 0);
	else
		*u = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

/* Turn text into the bytes of field f; 0, or -1 with *why. */
static int parse_value(const struct field *f, const char *text, struct value *v,
		       const char **why)
{
	uint64_t u = 0;
	int64_t i = 0;
	uint32_t k;

	memset(v, 0, sizeof(*v));
	v->seal = 1;
	v->len = f->size;
	switch (f->type) {
	case F_CSUM:
		if (strcmp(text, "calc") == 0)
			return 0; /* computed, like any other edit does */
		v->seal = 0;
		/* fall through */
	case F_UINT:
		if (parse_number(text, 0, &u, NULL)) {
			*why = "not a whole number (decimal, 0x hex or 0 octal)";
			return -1;
		}
		if (f->size < 8 && u >> (8 * f->size)) {
			*why = f->size == 1 ? "out of range (at most 255)" :
			       f->size == 2 ? "out of range (at most 65535)" :
					      "out of range (at most 4294967295)";
			return -1;
		}
		for (k = 0; k < f->size; k++)
			v->bytes[k] = (uint8_t)(u >> (8 * k));
		return 0;
	case F_INT:
		if (parse_number(text, 1, NULL, &i)) {
			*why = "not a whole number";
			return -1;
		}
		for (k = 0; k < f->size; k++)
			v->bytes[k] = (uint8_t)((uint64_t)i >> (8 * k));
		return 0;
	case F_UUID:
		return uuid_arg(text, v->bytes, why);
	case F_STRING:
		if (strlen(text) > f->size) {
			*why = "too long";
			return -1;
		}
		memcpy(v->bytes, text, strlen(text));
		return 0;
	}
	return -1;
}

/* Put a value into a record; a string field is padded with NULs. */
static void poke(uint8_t *rec, const struct field_ref *r, const struct value *v)
{
	memcpy(rec + r->off, v->bytes, v->len);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* ------------------------------------------------------------------------ */
/* The edits that wait for the close                                        */
/* ------------------------------------------------------------------------ */

enum late_kind { LATE_SUPER, LATE_GROUP, LATE_ZAP };

struct late {
	enum late_kind kind;
	struct field_ref ref;      /* LATE_SUPER, LATE_GROUP */
	struct value value;
	uint32_t group;            /* LATE_GROUP */
	uint64_t blk;              /* LATE_ZAP */
	uint32_t off, len;
	uint8_t pattern;
};

struct edits {
	struct late *v;
	size_t n, cap;
	uint32_t bsize;            /* of the image, for after the close */
	uint64_t gdt_start;
};

static struct late *late_add(struct session *s, enum late_kind kind)
{
	struct edits *e = s->edits;
	struct late *l;

	if (!e) {
		struct sufs_group_layout l0;
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		sufs_group_layout(sufs_get_super(s->fs), 0, &l0);
		e->bsize = sufs_get_super(s->fs)->block_size;
		e->gdt_start = l0.gdt_start;
		s->edits = e;
	}
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 16;
		l = realloc(e->v, cap * sizeof(*l));
		if (!l)
			return NULL;
		e->v = l;
		e->cap = cap;
	}
	l = &e->v[e->n++];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	return l;
}

/* Apply one field edit to a superblock (1024 bytes) or group descriptor. */
static void apply_field(const struct late *l, uint8_t *rec)
{
	poke(rec, &l->ref, &l->value);
	if (!l->value.seal)
		return;
	if (l->kind == LATE_SUPER)
		put_le32(rec + SB_CSUM_OFF, sufs_super_csum(rec));
	else
		put_le32(rec + GD_CSUM_OFF, sufs_group_csum(rec, l->group));
}

const struct sufs_super *edit_super_view(struct session *s, struct sufs_super *view)
{
	uint8_t raw[SUFS_SB_SIZE];
	size_t i;

	if (!s->edits)
		return sufs_get_super(s->fs);
	sufs_super_encode(sufs_get_super(s->fs), raw);
	for (i = 0; i < s->edits->n; i++)
		if (s->edits->v[i].kind == LATE_SUPER)
			apply_field(&s->edits->v[i], raw);
	sufs_super_decode(raw, view);
	return view;
}

int edit_group_view(struct session *s, uint32_t g, struct sufs_group *out)
{
	uint8_t raw[SUFS_GROUP_DESC_SIZE];
	int err = sufs_get_group(s->fs, g, out);
	size_t i;

	if (err || !s->edits)
		return err;
	sufs_group_encode(out, g, raw);
	for (i = 0; i < s->edits->n; i++)
		if (s->edits->v[i].kind == LATE_GROUP && s->edits->v[i].group == g)
			apply_field(&s->edits->v[i], raw);
	sufs_group_decode(raw, out);
	return 0;
}

/* Make one late edit on the closed image: read its block, change, write. */
static int apply_late(struct edits *e, struct sufs_dev *dev, const struct late *l,
		      uint8_t *blk)
{
	uint64_t b, off;
	int err;

	switch (l->kind) {
	case LATE_SUPER:
		b = SUFS_SB_OFFSET / e->bsize;
		off = SUFS_SB_OFFSET % e->bsize;
		break;
	case LATE_GROUP:
		b = e->gdt_start + (uint64_t)l->group * SUFS_GROUP_DESC_SIZE / e->bsize;
		off = (uint64_t)l->group * SUFS_GROUP_DESC_SIZE % e->bsize;
		break;
	default:
		b = l->blk;
		off = 0;
		break;
	}
	err = sufs_dev_read(dev, b * e->bsize, blk, e->bsize);
	if (err)
		return err;
	if (l->kind == LATE_ZAP)
		memset(blk + l->off, l->pattern, l->len);
	else
		apply_field(l, blk + off);
	return sufs_dev_write(dev, b * e->bsize, blk, e->bsize);
}

int edit_finish(struct session *s, int closed)
{
	struct edits *e = s->edits;
	struct sufs_dev *dev = NULL;
	uint8_t *blk = NULL;
	size_t i;
	int err = 0;

	if (!e)
		return 0;
	s->edits = NULL;
	if (!closed) {
		errmsg("the edits of the superblock and group descriptors were not made");
		err = -EIO;
		goto out;
	}
	blk = malloc(e->bsize);
	err = blk ? sufs_dev_open(s->image, SUFS_DEV_RDWR, &dev) : -ENOMEM;
	for (i = 0; !err && i < e->n; i++)
		err = apply_late(e, dev, &e->v[i], blk);
	if (!err)
		err = sufs_dev_barrier(dev);
	if (dev)
		sufs_dev_close(dev);
	if (err)
		errmsg("writing the edits of the superblock and group descriptors: %s",
		       sufs_strerror(err));
out:
	free(blk);
	free(e->v);
	free(e);
	return err ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Raw blocks through the cache                                              */
/* ------------------------------------------------------------------------ */

/*
 * Read block blk for a raw edit: everything pending goes out first, so
 * that the cache holds exactly what the library would write.
 */
static int raw_read(struct session *s, const char *cmd, uint64_t blk, uint8_t *buf)
{
	int err = sufs_sync(s->fs);

	if (!err)
		err = sufs_block_read(s->fs, blk, buf);
	if (err)
		return fail(cmd, NULL, "reading block %llu: %s", (unsigned long long)blk,
			    sufs_strerror(err));
	return 0;
}

/* Write it back, and to the disk at once. */
static int raw_write(struct session *s, const char *cmd, uint64_t blk, const uint8_t *buf)
{
	int err = sufs_block_write(s->fs, blk, buf);

	if (!err)
		err = sufs_sync(s->fs);
	if (err)
		return fail(cmd, NULL, "writing block %llu: %s", (unsigned long long)blk,
			    sufs_strerror(err));
	return 0;
}

/* The block and byte offset of an inode. */
static void inode_place(struct session *s, uint32_t ino, uint64_t *blk, uint32_t *off)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	uint32_t per = sb->block_size / SUFS_INODE_SIZE, idx = (ino - 1) % sb->inodes_per_group;
	struct sufs_group_layout l;

	sufs_group_layout(sb, (ino - 1) / sb->inodes_per_group, &l);
	*blk = l.inode_table + idx / per;
	*off = idx % per * SUFS_INODE_SIZE;
}

/* An INODE argument: a number, <N>, or a path (its last component not
 * followed).  A name made of digits alone is given as ./NAME. */
static int inode_arg(struct session *s, const char *cmd, const char *text, uint32_t *ino)
{
	uint32_t max = sufs_get_super(s->fs)->inodes_count;
	const char *p;

	for (p = text; isdigit((unsigned char)*p); p++)
		;
	if (p == text || *p)
		return resolve(s, cmd, text, 0, ino);
	if (parse_u32(text, ino) || *ino == 0 || *ino > max)
		return fail(cmd, text, "no such inode (the image has 1 to %u)", max);
	return 0;
}

/* A whole number argument that must be below limit (0: any). */
static int number_arg(const char *cmd, const char *text, const char *what, uint64_t limit,
		      uint64_t *out)
{
	if (parse_number(text, 0, out, NULL))
		return fail(cmd, text, "not %s %s", strchr("aeiou", what[0]) ? "an" : "a", what);
	if (limit && *out >= limit)
		return fail(cmd, text, "%s out of range (at most %llu)", what,
			    (unsigned long long)limit - 1);
	return 0;
}

/* "-l" alone lists the fields; returns 1 when it did. */
static int wants_list(int argc, char **argv, const char *what, const struct field *table)
{
	if (argc == 2 && strcmp(argv[1], "-l") == 0) {
		list_fields(what, table);
		return 1;
	}
	return 0;
}

static int usage_of(const char *cmd)
{
	const struct command *c = command_find(cmd);
	return fail(cmd, NULL, "usage: %s %s", c ? c->name : cmd, c ? c->args : "");
}

/* ------------------------------------------------------------------------ */
/* set_super_value, set_bg                                                   */
/* ------------------------------------------------------------------------ */

int cmd_set_super_value(struct session *s, int argc, char **argv)
{
	struct field_ref r;
	struct value v;
	struct late *l;
	const char *why;

	if (wants_list(argc, argv, "Superblock", super_fields))
		return 0;
	if (argc != 3)
		return usage_of(argv[0]);
	if (find_field(super_fields, argv[1], &r, &why))
		return fail(argv[0], argv[1], "%s", why);
	if (parse_value(r.f, argv[2], &v, &why))
		return fail(argv[0], argv[2], "%s: %s", argv[1], why);
	l = late_add(s, LATE_SUPER);
	if (!l)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	l->ref = r;
	l->value = v;
	return 0;
}

int cmd_set_bg(struct session *s, int argc, char **argv)
{
	uint32_t groups = sufs_get_super(s->fs)->groups_count;
	struct field_ref r;
	struct value v;
	struct late *l;
	const char *why;
	uint64_t g;

	if (wants_list(argc, argv, "Group descriptor", group_fields))
		return 0;
	if (argc != 4)
		return usage_of(argv[0]);
	if (number_arg(argv[0], argv[1], "group number", groups, &g))
		return 1;
	if (find_field(group_fields, argv[2], &r, &why))
		return fail(argv[0], argv[2], "%s", why);
	if (parse_value(r.f, argv[3], &v, &why))
		return fail(argv[0], argv[3], "%s: %s", argv[2], why);
	l = late_add(s, LATE_GROUP);
	if (!l)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	l->ref = r;
	l->value = v;
	l->group = (uint32_t)g;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* set_inode_field, clri                                                     */
/* ------------------------------------------------------------------------ */

int cmd_set_inode_field(struct session *s, int argc, char **argv)
{
	uint8_t *blk, *raw;
	struct field_ref r;
	struct value v;
	const char *why;
	uint64_t b;
	uint32_t ino, off;
	int rc;

	if (wants_list(argc, argv, "Inode", inode_fields))
		return 0;
	if (argc != 4)
		return usage_of(argv[0]);
	if (find_field(inode_fields, argv[2], &r, &why))
		return fail(argv[0], argv[2], "%s", why);
	if (parse_value(r.f, argv[3], &v, &why))
		return fail(argv[0], argv[3], "%s: %s", argv[2], why);
	if (inode_arg(s, argv[0], argv[1], &ino))
		return 1;
	blk = malloc(sufs_get_super(s->fs)->block_size);
	if (!blk)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	inode_place(s, ino, &b, &off);
	rc = raw_read(s, argv[0], b, blk);
	if (!rc) {
		raw = blk + off;
		poke(raw, &r, &v);
		if (v.seal) /* an inode of zeros has no checksum */
			put_le32(raw + IN_CSUM_OFF, sufs_inode_is_zero(raw) ? 0 :
				 sufs_inode_csum(raw, ino));
		rc = raw_write(s, argv[0], b, blk);
	}
	free(blk);
	return rc;
}

int cmd_clri(struct session *s, int argc, char **argv)
{
	uint8_t *blk;
	uint64_t b;
	uint32_t ino, off;
	int i, rc = 0;

	if (argc < 2)
		return usage_of(argv[0]);
	blk = malloc(sufs_get_super(s->fs)->block_size);
	if (!blk)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	for (i = 1; i < argc; i++) {
		if (inode_arg(s, argv[0], argv[i], &ino)) {
			rc = 1;
			continue;
		}
		inode_place(s, ino, &b, &off);
		if (raw_read(s, argv[0], b, blk)) {
			rc = 1;
			continue;
		}
		memset(blk + off, 0, SUFS_INODE_SIZE);
		rc |= raw_write(s, argv[0], b, blk);
	}
	free(blk);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* set_bmap, clear_bmap                                                      */
/* ------------------------------------------------------------------------ */

/* setb/seti/freeb/freei are debugfs's names: the name says which bitmap. */
static int bitmap_cmd(struct session *s, int argc, char **argv, int set)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	int inodes = strcmp(argv[0], "seti") == 0 || strcmp(argv[0], "freei") == 0;
	uint64_t first, count = 1, n, limit, bmblk = 0;
	struct sufs_group_layout l;
	uint8_t *blk;
	uint32_t g, bit, mask;
	int i = 1, rc = 0, have = 0;

	if (argc > 1 && strcmp(argv[1], "-i") == 0) {
		inodes = 1;
		i++;
	}
	if (argc - i < 1 || argc - i > 2)
		return usage_of(argv[0]);
	limit = inodes ? (uint64_t)sb->inodes_count + 1 : sb->blocks_count;
	if (number_arg(argv[0], argv[i], inodes ? "inode number" : "block number", limit, &first))
		return 1;
	if (inodes && first == 0)
		return fail(argv[0], argv[i], "inode numbers start at 1");
	if (argc - i == 2) {
		if (number_arg(argv[0], argv[i + 1], "count", 0, &count))
			return 1;
		if (count == 0 || count > limit - first)
			return fail(argv[0], argv[i + 1], "count out of range (1 to %llu)",
				    (unsigned long long)(limit - first));
	}
	blk = malloc(sb->block_size);
	if (!blk)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	for (n = first; n < first + count && !rc; n++) {
		uint64_t want;
		if (inodes) {
			g = (uint32_t)((n - 1) / sb->inodes_per_group);
			bit = (uint32_t)((n - 1) % sb->inodes_per_group);
		} else {
			g = (uint32_t)(n / sb->blocks_per_group);
			bit = (uint32_t)(n % sb->blocks_per_group);
		}
		sufs_group_layout(sb, g, &l);
		want = inodes ? l.inode_bitmap : l.block_bitmap;
		if (!have || want != bmblk) {
			if (have && (rc = raw_write(s, argv[0], bmblk, blk)) != 0)
				break;
			bmblk = want;
			have = 0;
			if ((rc = raw_read(s, argv[0], bmblk, blk)) != 0)
				break;
			have = 1;
		}
		mask = 1u << (bit & 7);
		if (!!(blk[bit / 8] & mask) == set)
			warnmsg("%s %llu: %s %llu is already %s", argv[0], (unsigned long long)n,
				inodes ? "inode" : "block", (unsigned long long)n,
				set ? "marked in use" : "marked free");
		if (set)
			blk[bit / 8] |= (uint8_t)mask;
		else
			blk[bit / 8] &= (uint8_t)~mask;
	}
	if (have && !rc)
		rc = raw_write(s, argv[0], bmblk, blk);
	free(blk);
	return rc;
}

int cmd_set_bmap(struct session *s, int argc, char **argv)
{
	return bitmap_cmd(s, argc, argv, 1);
}

int cmd_clear_bmap(struct session *s, int argc, char **argv)
{
	return bitmap_cmd(s, argc, argv, 0);
}

/* ------------------------------------------------------------------------ */
/* zap_block                                                                 */
/* ------------------------------------------------------------------------ */

int cmd_zap_block(struct session *s, int argc, char **argv)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	const char *file = NULL;
	struct sufs_group_layout l0;
	uint64_t blk, off = 0, len, pattern = 0;
	uint32_t ino;
	uint8_t *buf;
	struct late *l;
	int i = 1, rc, err;

	if (argc > 2 && strcmp(argv[1], "-f") == 0) {
		file = argv[2];
		i = 3;
	}
	if (argc - i < 1 || argc - i > 4)
		return usage_of(argv[0]);
	if (file) {
		if (number_arg(argv[0], argv[i], "logical block number", 0, &blk) ||
		    resolve(s, argv[0], file, 0, &ino))
			return 1;
		err = sufs_bmap(s->fs, ino, blk, &blk);
		if (err)
			return fail(argv[0], file, "%s", sufs_strerror(err));
		if (!blk) {
			char *e = escape_name(file, strlen(file));
			fail(argv[0], argv[i], "a hole in %s: no block to zap", e ? e : "the file");
			free(e);
			return 1;
		}
	} else if (number_arg(argv[0], argv[i], "block number", sb->blocks_count, &blk)) {
		return 1;
	}
	if (argc - i > 1 && number_arg(argv[0], argv[i + 1], "byte offset", sb->block_size, &off))
		return 1;
	len = sb->block_size - off;
	if (argc - i > 2 && number_arg(argv[0], argv[i + 2], "length", len + 1, &len))
		return 1;
	if (argc - i > 3 && number_arg(argv[0], argv[i + 3], "pattern byte", 256, &pattern))
		return 1;

	/* the boot area, superblock and descriptor table: after the close */
	sufs_group_layout(sb, 0, &l0);
	if (blk < l0.block_bitmap) {
		l = late_add(s, LATE_ZAP);
		if (!l)
			return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
		l->blk = blk;
		l->off = (uint32_t)off;
		l->len = (uint32_t)len;
		l->pattern = (uint8_t)pattern;
		return 0;
	}
	buf = malloc(sb->block_size);
	if (!buf)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	rc = raw_read(s, argv[0], blk, buf);
	if (!rc) {
		memset(buf + off, (int)pattern, len);
		rc = raw_write(s, argv[0], blk, buf);
	}
	free(buf);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* set_dirent                                                                */
/* ------------------------------------------------------------------------ */

/* Find the live entry called name in the block; its offset, or -1. */
static long find_entry(const uint8_t *blk, uint32_t bsize, const char *name)
{
	uint32_t end = bsize - SUFS_DIR_TAIL_SIZE, off = 0, reclen, namelen;
	size_t len = strlen(name);

	while (off + SUFS_DIRENT_HDR <= end) {
		reclen = (uint32_t)get_le(blk + off + 4, 2);
		namelen = blk[off + 6];
		if (reclen < SUFS_DIRENT_HDR || reclen > end - off)
			return -1; /* malformed from here on */
		if (get_le(blk + off, 4) && namelen == len && namelen <= reclen - SUFS_DIRENT_HDR &&
		    memcmp(blk + off + SUFS_DIRENT_HDR, name, len) == 0)
			return off;
		off += reclen;
	}
	return -1;
}

int cmd_set_dirent(struct session *s, int argc, char **argv)
{
	uint32_t bsize = sufs_get_super(s->fs)->block_size, dir;
	struct sufs_inode in;
	struct field_ref r;
	struct value v;
	const char *why;
	uint64_t lblk, pblk, nblk;
	uint8_t *blk;
	long off = -1;
	int rc, err;

	if (wants_list(argc, argv, "Directory entry", dirent_fields))
		return 0;
	if (argc != 5)
		return usage_of(argv[0]);
	if (find_field(dirent_fields, argv[3], &r, &why))
		return fail(argv[0], argv[3], "%s", why);
	if (parse_value(r.f, argv[4], &v, &why))
		return fail(argv[0], argv[4], "%s: %s", argv[3], why);
	if (r.f->type == F_STRING && !*argv[4])
		return fail(argv[0], argv[4], "name: a name cannot be empty");
	if (resolve(s, argv[0], argv[1], 1, &dir))
		return 1;
	err = sufs_inode_get(s->fs, dir, &in);
	if (err && err != -SUFS_ECHECKSUM)
		return fail(argv[0], argv[1], "%s", sufs_strerror(err));
	if ((in.mode & 0170000) != 0040000)
		return fail(argv[0], argv[1], "%s", sufs_strerror(-ENOTDIR));
	blk = malloc(bsize);
	if (!blk)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	nblk = in.size / bsize;
	for (lblk = 0, rc = 0; lblk < nblk && off < 0 && !rc; lblk++) {
		err = sufs_bmap(s->fs, dir, lblk, &pblk);
		if (err) {
			rc = fail(argv[0], argv[1], "block %llu: %s", (unsigned long long)lblk,
				  sufs_strerror(err));
			break;
		}
		if (pblk && !(rc = raw_read(s, argv[0], pblk, blk)))
			off = find_entry(blk, bsize, argv[2]);
	}
	if (!rc && off < 0) {
		char *e = escape_name(argv[1], strlen(argv[1]));
		rc = fail(argv[0], argv[2], "no such entry in %s", e ? e : "the directory");
		free(e);
	}
	if (!rc) {
		uint8_t *de = blk + off;
		if (r.f->type == F_STRING) {
			uint32_t len = (uint32_t)strlen(argv[4]);
			if (SUFS_DIRENT_HDR + len > get_le(de + 4, 2)) {
				rc = fail(argv[0], argv[4], "name: longer than the entry's rec_len");
			} else {
				memcpy(de + SUFS_DIRENT_HDR, argv[4], len);
				de[6] = (uint8_t)len;
			}
		} else {
			poke(de, &r, &v);
		}
		if (!rc) {
			sufs_dirblock_seal(blk, bsize, pblk);
			rc = raw_write(s, argv[0], pblk, blk);
		}
	}
	free(blk);
	return rc;
}
