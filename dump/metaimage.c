/*
 * metaimage.c - metadata images: every block a sufs file system needs to be
 * opened, listed and checked, and none of its file data, in one compressed
 * file (sufs-dump -m), and back again as a sparse raw image (--restore).
 *
 * THE FILE FORMAT (version 1).  Every number is little-endian.
 *
 *   Header, 64 bytes:
 *      0  8  magic "SUFSMETA"
 *      8  4  format version, 1
 *     12  4  block size of the file system
 *     16  8  size in bytes of the original image (the restored image's size)
 *     24  8  blocks in the file system (the superblock's block count)
 *     32  8  blocks stored in the records below
 *     40  8  records stored (the end record not counted)
 *     48  8  length in bytes of the compressed stream that follows
 *     56  4  reserved, 0
 *     60  4  CRC-32 of bytes 0-59
 *
 *   Then one zlib stream (RFC 1950: deflate data ended by an Adler-32 of what
 *   it holds), and nothing after it.  Uncompressed, the stream is a list of
 *   records, each
 *      0  8  first block number
 *      8  4  number of blocks n, at least 1
 *     12     n blocks of data
 *   in increasing block order without overlap, ended by one end record:
 *   block number 2^64-1, count 0, no data.  A block of all zeros is never
 *   stored; it reads as zeros from the restored image, which is sparse.
 *
 * A file that is cut short, has bytes added, or has bytes changed in its
 * header or in what its stream holds is refused with a message that says
 * so: the length and the counts in the header, the header's CRC, zlib's own
 * checks (the Adler-32 covers every byte the stream holds) and the end
 * record each catch some of it.  (A change to bits of the deflate data that
 * do not change what it holds, such as padding, goes unseen, and does no
 * harm: the restored image is the same.)
 * Every count read from a file is checked before it is used, so that no
 * record can make --restore write outside the image it creates.
 *
 * WHAT IS SAVED: block 0 and the block that holds the primary superblock;
 * for each group its superblock copy, the group descriptor table (group 0),
 * the block and inode bitmaps and the inode table, where the geometry puts
 * them and also where the group descriptor says, should that differ; and,
 * for every inode that the inode bitmap says is in use, every block of a
 * directory or of a symlink whose target does not fit in the inode, and
 * the indirect blocks (sufs_block_iterate levels 1-3) of a regular file,
 * and the attribute block of every inode that names one (its extended
 * attributes: ACLs and labels are metadata too).
 * The data blocks of regular files are never saved.
 */
#include "config.h"
#include "metaimage.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define META_MAGIC      "SUFSMETA"
#define META_VERSION    1u
#define META_HDR_SIZE   64u
#define META_REC_SIZE   12u
#define META_END        UINT64_MAX
#define META_CHUNK      (1u << 20) /* bytes read or written at a time */

struct meta_header {
	uint32_t version;
	uint32_t block_size;
	uint64_t image_bytes;
	uint64_t blocks_count;
	uint64_t stored_blocks;
	uint64_t records;
	uint64_t stream_bytes;
};

/* ---- little-endian fields -------------------------------------------------- */

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static uint32_t header_crc(const uint8_t *raw)
{
	return (uint32_t)crc32(0, raw, META_HDR_SIZE - 4);
}

static void header_encode(const struct meta_header *h, uint8_t *raw)
{
	memset(raw, 0, META_HDR_SIZE);
	memcpy(raw, META_MAGIC, 8);
	le32(raw + 8, h->version);
	le32(raw + 12, h->block_size);
	le64(raw + 16, h->image_bytes);
	le64(raw + 24, h->blocks_count);
	le64(raw + 32, h->stored_blocks);
	le64(raw + 40, h->records);
	le64(raw + 48, h->stream_bytes);
	le32(raw + 60, header_crc(raw));
}

/* Decode and check a header; NULL, or what is wrong with it. */
static const char *header_decode(const uint8_t *raw, struct meta_header *h)
{
	uint32_t bs;

	if (memcmp(raw, META_MAGIC, 8) != 0)
		return "not a sufs metadata image (bad magic)";
	if (get_le32(raw + 60) != header_crc(raw))
		return "corrupt metadata image (header checksum does not match)";
	h->version = get_le32(raw + 8);
	h->block_size = bs = get_le32(raw + 12);
	h->image_bytes = get_le64(raw + 16);
	h->blocks_count = get_le64(raw + 24);
	h->stored_blocks = get_le64(raw + 32);
	h->records = get_le64(raw + 40);
	h->stream_bytes = get_le64(raw + 48);
	if (h->version != META_VERSION)
		return "unsupported metadata image version";
	if (get_le32(raw + 56) != 0)
		return "corrupt metadata image (reserved header field is not 0)";
	if (bs < SUFS_MIN_BLOCK_SIZE || bs > SUFS_MAX_BLOCK_SIZE || (bs & (bs - 1)))
		return "corrupt metadata image (bad block size)";
	if (h->image_bytes > INT64_MAX || h->blocks_count == 0 ||
	    h->blocks_count > h->image_bytes / bs)
		return "corrupt metadata image (bad image size or block count)";
	if (h->stored_blocks > h->blocks_count || h->records > h->stored_blocks ||
	    h->stream_bytes > INT64_MAX)
		return "corrupt metadata image (bad counts)";
	return NULL;
}

/* ---- plain file helpers ------------------------------------------------------ */

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read up to len bytes; returns the count read (short only at end of file)
 * or -errno. */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int all_zero(const uint8_t *p, size_t len)
{
	return p[0] == 0 && memcmp(p, p + 1, len - 1) == 0;
}

/*
 * Whether out may be written: EXIT_OK, or the status after the message.
 * The output is made whole beside it and renamed into place (outfile.c).
 */
static int check_output(const char *out, int force, const struct stat *in)
{
	const char *why;
	int err = outfile_check(out, in, force, &why);

	if (!err)
		return EXIT_OK;
	errmsg("%s: %s", shown(out), why);
	return EXIT_FILE;
}

/* The output gets the input's read and write bits (less the umask): it
 * holds what the input holds. */
static int open_output(struct outfile *o, const char *out, const struct stat *in)
{
	int err = outfile_open(o, out, in->st_mode);

	if (err == -EBUSY) {
		errmsg("%s: another program has it open for writing; it is not replaced",
		       shown(out));
		return EXIT_FILE;
	}
	if (err) {
		errmsg("%s: making a temporary file beside it: %s", shown(out), strerror(-err));
		return EXIT_FILE;
	}
	return EXIT_OK;
}

/* Put the output in place when the job succeeded; else remove it. */
static int close_output(struct outfile *o, int force, int status)
{
	const char *where;
	int err;

	if (status != EXIT_OK) {
		outfile_abort(o);
		return status;
	}
	err = outfile_commit(o, force, &where);
	if (err) {
		errmsg("%s: %s: %s", shown(o->path), where, strerror(-err));
		return EXIT_FILE;
	}
	return EXIT_OK;
}

/* ---- the set of blocks to save ------------------------------------------------ */

struct blockset {
	uint8_t *bits;
	uint64_t nblocks;
	uint64_t count;
};

static void mark(struct blockset *s, uint64_t blk)
{
	uint8_t m = (uint8_t)(1u << (blk & 7));

	if (blk >= s->nblocks || (s->bits[blk >> 3] & m))
		return;
	s->bits[blk >> 3] |= m;
	s->count++;
}

static void mark_range(struct blockset *s, uint64_t start, uint64_t n)
{
	if (start >= s->nblocks)
		return;
	if (n > s->nblocks - start)
		n = s->nblocks - start;
	while (n--)
		mark(s, start++);
}

static int marked(const struct blockset *s, uint64_t blk)
{
	return (s->bits[blk >> 3] >> (blk & 7)) & 1;
}

/* The fixed metadata: superblocks, descriptor table, bitmaps, inode tables. */
static void mark_groups(struct sufs_fs *fs, struct blockset *set)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct sufs_group_layout l;
	struct sufs_group gd;
	uint32_t g;

	mark(set, 0);
	mark(set, SUFS_SB_OFFSET / sb->block_size);
	for (g = 0; g < sb->groups_count; g++) {
		sufs_group_layout(sb, g, &l);
		if (l.sb_block != UINT64_MAX)
			mark(set, l.sb_block);
		if (l.gdt_start != UINT64_MAX)
			mark_range(set, l.gdt_start, l.gdt_blocks);
		mark(set, l.block_bitmap);
		mark(set, l.inode_bitmap);
		mark_range(set, l.inode_table, l.inode_table_blocks);
		/* a damaged descriptor may point elsewhere: keep that too */
		if (sufs_get_group(fs, g, &gd) == 0) {
			mark(set, gd.block_bitmap);
			mark(set, gd.inode_bitmap);
			mark_range(set, gd.inode_table, l.inode_table_blocks);
		}
	}
}

struct mark_walk {
	struct blockset *set;
	int min_level;  /* 0: every block; 1: indirect blocks only */
};

static int mark_mapped(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		       int level, int bad, void *arg)
{
	struct mark_walk *w = arg;

	if (!bad && level >= w->min_level)
		mark(w->set, pblk);
	return 0;
}

/*
 * The blocks the inodes in use point to: all of a directory's or a slow
 * symlink's, only the indirect ones of a regular file.  An inode whose
 * checksum fails is followed as far as the library lets us.
 */
static int mark_inodes(struct sufs_fs *fs, const char *name, struct blockset *set)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct progress p;
	struct sufs_inode in;
	struct mark_walk w = { set, 0 };
	uint32_t ino;
	int used, rc;

	progress_start(&p, "Scanning inodes", sb->inodes_count);
	for (ino = 1; ino <= sb->inodes_count; ino++) {
		progress_update(&p, ino);
		rc = sufs_bitmap_test(fs, SUFS_BITMAP_INODE, ino, &used);
		if (rc == 0 && !used)
			continue;
		if (rc == 0)
			rc = sufs_inode_get(fs, ino, &in);
		if (rc && rc != -SUFS_ECHECKSUM) {
			progress_stop(&p);
			errmsg("%s: inode %u: %s", shown(name), ino, sufs_strerror(rc));
			return rc;
		}
		/* its attribute block: a pointer out of range is not followed,
		 * nor one an image without the feature holds (reserved bytes) */
		if (in.xattr_block && in.xattr_block < sb->blocks_count &&
		    (sb->features_ro_compat & SUFS_FEATURE_RO_XATTR))
			mark(set, in.xattr_block);
		switch (in.mode & S_IFMT) {
		case S_IFDIR:
			w.min_level = 0;
			break;
		case S_IFLNK:
			if (in.size <= SUFS_FAST_SYMLINK_MAX)
				continue;
			w.min_level = 0;
			break;
		case S_IFREG:
			w.min_level = 1;
			break;
		default:
			continue;
		}
		/* a damaged inode's map may not be walkable: what was found before
		 * the damage is marked, and the rest is said to be missing */
		rc = sufs_block_iterate(fs, ino, mark_mapped, &w);
		if (rc)
			warnmsg("%s: inode %u: %s: blocks it maps may be missing", shown(name), ino,
				sufs_strerror(rc));
	}
	progress_end(&p);
	return 0;
}

/* ---- compressed output ----------------------------------------------------------- */

struct writer {
	int fd;
	const char *name;
	z_stream z;
	uint64_t written;          /* compressed bytes */
	uint8_t out[1u << 16];
};

/* Compress len bytes (flush: Z_NO_FLUSH, or Z_FINISH to end the stream). */
static int writer_put(struct writer *w, const void *buf, size_t len, int flush)
{
	int zrc, err;
	size_t n;

	w->z.next_in = (Bytef *)(uintptr_t)buf;
	w->z.avail_in = (uInt)len;
	do {
		w->z.next_out = w->out;
		w->z.avail_out = sizeof(w->out);
		zrc = deflate(&w->z, flush);
		if (zrc == Z_STREAM_ERROR) {
			errmsg("%s: compression failed", shown(w->name));
			return -1;
		}
		n = sizeof(w->out) - w->z.avail_out;
		err = write_all(w->fd, w->out, n);
		if (err) {
			errmsg("%s: %s", shown(w->name), strerror(-err));
			return -1;
		}
		w->written += n;
	} while (w->z.avail_out == 0 || (flush == Z_FINISH && zrc != Z_STREAM_END));
	return 0;
}

static int put_record(struct writer *w, uint64_t start, uint32_t count, const uint8_t *data,
		      size_t len)
{
	uint8_t rec[META_REC_SIZE];

	le64(rec, start);
	le32(rec + 8, count);
	if (writer_put(w, rec, sizeof(rec), Z_NO_FLUSH))
		return -1;
	return len ? writer_put(w, data, len, Z_NO_FLUSH) : 0;
}

/*
 * Store the n blocks from first on that buf holds, as records of the
 * blocks in it that are not all zeros.
 */
static int put_blocks(struct writer *w, struct meta_header *h, uint64_t first, uint32_t n,
		      const uint8_t *buf)
{
	uint32_t bs = h->block_size, i = 0, j;

	while (i < n) {
		if (all_zero(buf + (size_t)i * bs, bs)) {
			i++;
			continue;
		}
		for (j = i + 1; j < n && !all_zero(buf + (size_t)j * bs, bs); j++)
			;
		if (put_record(w, first + i, j - i, buf + (size_t)i * bs, (size_t)(j - i) * bs))
			return -1;
		h->records++;
		h->stored_blocks += j - i;
		i = j;
	}
	return 0;
}

/* Read the marked blocks in runs and store them. */
static int save_blocks(struct sufs_fs *fs, const char *name, const struct blockset *set,
		       struct writer *w, struct meta_header *h)
{
	struct sufs_dev *dev = sufs_get_dev(fs);
	uint32_t bs = h->block_size, max = META_CHUNK / bs, n;
	uint64_t blk = 0, done = 0;
	struct progress p;
	uint8_t *buf = malloc(META_CHUNK);
	int rc = 0;

	if (!buf) {
		errmsg("%s", strerror(ENOMEM));
		return -1;
	}
	progress_start(&p, "Saving metadata", set->count);
	while (blk < set->nblocks && rc == 0) {
		if (!marked(set, blk)) {
			blk++;
			continue;
		}
		for (n = 1; n < max && blk + n < set->nblocks && marked(set, blk + n); n++)
			;
		rc = sufs_dev_read(dev, blk * bs, buf, (size_t)n * bs);
		if (rc) {
			errmsg("%s: reading block %llu: %s", shown(name), (unsigned long long)blk,
			       sufs_strerror(rc));
			break;
		}
		rc = put_blocks(w, h, blk, n, buf);
		blk += n;
		done += n;
		progress_update(&p, done);
	}
	progress_end(&p);
	free(buf);
	return rc ? -1 : 0;
}

static int write_stream(struct sufs_fs *fs, const char *name, const struct blockset *set,
			int fd, const char *out, struct meta_header *h)
{
	struct writer *w = calloc(1, sizeof(*w));
	int rc;

	if (!w) {
		errmsg("%s", strerror(ENOMEM));
		return -1;
	}
	w->fd = fd;
	w->name = out;
	if (deflateInit(&w->z, Z_DEFAULT_COMPRESSION) != Z_OK) {
		errmsg("%s: cannot start compression", shown(out));
		free(w);
		return -1;
	}
	rc = save_blocks(fs, name, set, w, h);
	if (rc == 0)
		rc = put_record(w, META_END, 0, NULL, 0);
	if (rc == 0)
		rc = writer_put(w, NULL, 0, Z_FINISH);
	h->stream_bytes = w->written;
	deflateEnd(&w->z);
	free(w);
	return rc;
}

int metaimage_save(struct sufs_fs *fs, const char *image_name, const char *out, int force)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct sufs_dev *dev = sufs_get_dev(fs);
	struct meta_header h = { 0 };
	struct blockset set = { 0 };
	uint8_t raw[META_HDR_SIZE];
	struct stat in_st;
	struct outfile o;
	int fd, status, err;

	if (stat(image_name, &in_st) != 0) {
		errmsg("%s: %s", shown(image_name), strerror(errno));
		return EXIT_IMAGE;
	}
	h.version = META_VERSION;
	h.block_size = sb->block_size;
	h.image_bytes = dev->size;
	h.blocks_count = sb->blocks_count;

	set.nblocks = sb->blocks_count;
	set.bits = calloc(set.nblocks / 8 + 1, 1);
	if (!set.bits) {
		errmsg("%s: %s", shown(image_name), strerror(ENOMEM));
		return EXIT_FILE;
	}
	status = check_output(out, force, &in_st);
	if (status == EXIT_OK)
		status = open_output(&o, out, &in_st);
	if (status != EXIT_OK) {
		free(set.bits);
		return status;
	}
	fd = o.fd;
	mark_groups(fs, &set);
	/* the header goes last, when the counts are known */
	memset(raw, 0, sizeof(raw));
	if (mark_inodes(fs, image_name, &set)) {
		status = EXIT_IO;
	} else if ((err = write_all(fd, raw, sizeof(raw))) != 0) {
		errmsg("%s: %s", shown(out), strerror(-err));
		status = EXIT_FILE;
	} else if (write_stream(fs, image_name, &set, fd, out, &h)) {
		status = EXIT_FILE;
	} else {
		header_encode(&h, raw);
		err = pwrite_all(fd, raw, sizeof(raw), 0);
		if (err) {
			errmsg("%s: %s", shown(out), strerror(-err));
			status = EXIT_FILE;
		}
	}
	free(set.bits);
	return close_output(&o, force, status);
}

/* ---- compressed input ----------------------------------------------------------- */

struct reader {
	int fd;
	const char *name;
	z_stream z;
	uint64_t left;             /* compressed bytes still to read from the file */
	int ended;                 /* the zlib stream has ended */
	uint8_t in[1u << 16];
};

/* One step of inflate into z.next_out, reading more input as needed;
 * 0, or -1 after a message. */
static int reader_step(struct reader *r)
{
	ssize_t n;
	int zrc;

	if (r->z.avail_in == 0 && r->left > 0) {
		size_t want = r->left < sizeof(r->in) ? (size_t)r->left : sizeof(r->in);
		n = read_full(r->fd, r->in, want);
		if (n < 0) {
			errmsg("%s: %s", shown(r->name), strerror((int)-n));
			return -1;
		}
		if ((size_t)n < want) {
			errmsg("%s: truncated metadata image (the file ends early)",
			       shown(r->name));
			return -1;
		}
		r->z.next_in = r->in;
		r->z.avail_in = (uInt)n;
		r->left -= (uint64_t)n;
	}
	zrc = inflate(&r->z, Z_NO_FLUSH);
	switch (zrc) {
	case Z_OK:
		return 0;
	case Z_STREAM_END:
		r->ended = 1;
		return 0;
	case Z_BUF_ERROR:
		/* no progress possible: all input is used and the stream goes on */
		errmsg("%s: truncated metadata image (the compressed data ends early)",
		       shown(r->name));
		return -1;
	case Z_MEM_ERROR:
		errmsg("%s: %s", shown(r->name), strerror(ENOMEM));
		return -1;
	default:
		errmsg("%s: corrupt metadata image (%s)", shown(r->name),
		       r->z.msg ? r->z.msg : zError(zrc));
		return -1;
	}
}

/* Exactly len bytes of the uncompressed stream; 0, or -1 after a message. */
static int reader_get(struct reader *r, void *buf, size_t len)
{
	r->z.next_out = buf;
	r->z.avail_out = (uInt)len;
	while (r->z.avail_out > 0) {
		if (r->ended) {
			errmsg("%s: corrupt metadata image (the data ends before its end record)",
			       shown(r->name));
			return -1;
		}
		if (reader_step(r))
			return -1;
	}
	return 0;
}

/* After the end record: the stream must end, and the file with it (a
 * pipe's length is not known before: one more byte is asked for). */
static int reader_end(struct reader *r)
{
	uint8_t extra;
	ssize_t n;

	r->z.next_out = &extra;
	r->z.avail_out = 1;
	while (!r->ended && r->z.avail_out) {
		if (reader_step(r))
			return -1;
	}
	if (!r->z.avail_out) {
		errmsg("%s: corrupt metadata image (data after the end record)", shown(r->name));
		return -1;
	}
	n = r->z.avail_in || r->left ? 1 : read_full(r->fd, &extra, 1);
	if (n < 0) {
		errmsg("%s: %s", shown(r->name), strerror((int)-n));
		return -1;
	}
	if (n > 0) {
		errmsg("%s: corrupt metadata image (bytes after the compressed data)",
		       shown(r->name));
		return -1;
	}
	return 0;
}

/* Write the records of the stream into the image; 0 or -1 after a message. */
static int restore_records(struct reader *r, const struct meta_header *h, int fd,
			   const char *out)
{
	uint32_t bs = h->block_size, max = META_CHUNK / bs, count, n;
	uint64_t start, next = 0, stored = 0, records = 0;
	uint8_t rec[META_REC_SIZE];
	struct progress p;
	uint8_t *buf = malloc(META_CHUNK);
	int rc = -1, err;

	if (!buf) {
		errmsg("%s", strerror(ENOMEM));
		return -1;
	}
	progress_start(&p, "Restoring metadata", h->stored_blocks);
	for (;;) {
		if (reader_get(r, rec, sizeof(rec)))
			goto out;
		start = get_le64(rec);
		count = get_le32(rec + 8);
		if (start == META_END && count == 0)
			break;
		if (count == 0 || start < next || start >= h->blocks_count ||
		    count > h->blocks_count - start) {
			errmsg("%s: corrupt metadata image (record for %u blocks at block %llu "
			       "is out of order or out of range)", shown(r->name), count,
			       (unsigned long long)start);
			goto out;
		}
		if (count > h->stored_blocks - stored || records == h->records) {
			errmsg("%s: corrupt metadata image (more data than the header says)",
			       shown(r->name));
			goto out;
		}
		records++;
		stored += count;
		next = start + count;
		while (count) {
			n = count < max ? count : max;
			if (reader_get(r, buf, (size_t)n * bs))
				goto out;
			err = pwrite_all(fd, buf, (size_t)n * bs, start * bs);
			if (err) {
				errmsg("%s: %s", shown(out), strerror(-err));
				goto out;
			}
			start += n;
			count -= n;
			progress_update(&p, stored - count);
		}
	}
	if (stored != h->stored_blocks) {
		errmsg("%s: corrupt metadata image (%llu of %llu blocks found)", shown(r->name),
		       (unsigned long long)stored, (unsigned long long)h->stored_blocks);
		goto out;
	}
	if (records != h->records) {
		errmsg("%s: corrupt metadata image (%llu of %llu records found)", shown(r->name),
		       (unsigned long long)records, (unsigned long long)h->records);
		goto out;
	}
	rc = reader_end(r);
out:
	progress_end(&p);
	free(buf);
	return rc;
}

/* Open the metadata image and check its header and length. */
static int open_meta(const char *meta, struct meta_header *h, struct stat *st, int *fdp)
{
	uint8_t raw[META_HDR_SIZE];
	const char *why;
	ssize_t n;
	int fd = open(meta, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		errmsg("%s: %s", shown(meta), strerror(errno));
		return EXIT_FILE;
	}
	if (fstat(fd, st) != 0) {
		errmsg("%s: %s", shown(meta), strerror(errno));
		close(fd);
		return EXIT_FILE;
	}
	n = read_full(fd, raw, sizeof(raw));
	if (n < 0) {
		errmsg("%s: %s", shown(meta), strerror((int)-n));
		close(fd);
		return EXIT_FILE;
	}
	why = (size_t)n < sizeof(raw) ? "not a sufs metadata image (too short)"
				      : header_decode(raw, h);
	if (!why && S_ISREG(st->st_mode) &&
	    (uint64_t)st->st_size != META_HDR_SIZE + h->stream_bytes)
		why = (uint64_t)st->st_size < META_HDR_SIZE + h->stream_bytes
			? "truncated metadata image (shorter than its header says)"
			: "corrupt metadata image (longer than its header says)";
	if (why) {
		errmsg("%s: %s", shown(meta), why);
		close(fd);
		return EXIT_FILE;
	}
	*fdp = fd;
	return EXIT_OK;
}

int metaimage_restore(const char *meta, const char *out, int force)
{
	struct meta_header h;
	struct stat st;
	struct reader *r;
	struct outfile o;
	int in_fd, status;

	status = open_meta(meta, &h, &st, &in_fd);
	if (status != EXIT_OK)
		return status;
	r = calloc(1, sizeof(*r));
	if (!r || inflateInit(&r->z) != Z_OK) {
		errmsg("%s: %s", shown(meta), strerror(ENOMEM));
		free(r);
		close(in_fd);
		return EXIT_FILE;
	}
	r->fd = in_fd;
	r->name = meta;
	r->left = h.stream_bytes;

	status = check_output(out, force, &st);
	if (status == EXIT_OK)
		status = open_output(&o, out, &st);
	if (status == EXIT_OK) {
		if (ftruncate(o.fd, (off_t)h.image_bytes) != 0) {
			errmsg("%s: %s", shown(out), strerror(errno));
			status = EXIT_FILE;
		} else if (restore_records(r, &h, o.fd, out)) {
			status = EXIT_FILE;
		}
		status = close_output(&o, force, status);
	}
	inflateEnd(&r->z);
	free(r);
	close(in_fd);
	return status;
}
