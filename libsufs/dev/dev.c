/*
 * dev.c - the device: an image file or a block device behind a table of
 * functions (struct sufs_dev_ops).  Everything that reaches the disk passes
 * through sufs_dev_write() and sufs_dev_barrier(), which is where later
 * devices (the I/O log, a snapshot view) wrap this one.
 */
#include "config.h"
#include "sufs_int.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * With SUFS_DEV_DIRECT a second descriptor opened with O_DIRECT takes
 * every request whose offset, length and memory are aligned as the
 * kernel wants (statx's STATX_DIOALIGN, else the device's sector size,
 * else 4 KiB): the blocks go to the device and not to the page cache.
 * The rest (the 1 KiB superblock at 1 KiB on a disk of 4 KiB sectors)
 * goes through the page cache as without the flag; the kernel keeps the
 * two coherent, and the barrier's fdatasync() covers both.
 */
struct file_dev {
	int fd;
	int dfd;                   /* O_DIRECT, or -1 */
	uint32_t align;            /* what dfd's requests must be aligned to */
};

/* The descriptor for a request: dfd when it is aligned for it. */
static int fd_for(const struct file_dev *f, uint64_t off, const void *buf, size_t len)
{
	uint64_t a = f->align;

	if (f->dfd < 0 || (off | len | (uintptr_t)buf) % a)
		return f->fd;
	return f->dfd;
}

static int file_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	struct file_dev *f = dev->priv;
	int fd = fd_for(f, off, buf, len);
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			/* past the end of the file: what was never written reads as zeros */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
		fd = f->fd; /* what is left of a short transfer is not aligned */
	}
	return 0;
}

static int file_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct file_dev *f = dev->priv;
	int fd = fd_for(f, off, buf, len);
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
		fd = f->fd; /* what is left of a short transfer is not aligned */
	}
	return 0;
}

static int file_barrier(struct sufs_dev *dev)
{
	struct file_dev *f = dev->priv;
	return fdatasync(f->fd) ? -errno : 0;
}

static int file_resize(struct sufs_dev *dev, uint64_t bytes)
{
	struct file_dev *f = dev->priv;
	if (dev->is_blockdev)
		return bytes <= dev->size ? 0 : -ENOSPC;
	if (ftruncate(f->fd, (off_t)bytes))
		return -errno;
	dev->size = bytes;
	return 0;
}

/* The page cache reads the range in the background.  Not with O_DIRECT,
 * whose reads pass the page cache by. */
static void file_prefetch(struct sufs_dev *dev, uint64_t off, uint64_t len)
{
	struct file_dev *f = dev->priv;

	if (f->dfd < 0)
		(void)posix_fadvise(f->fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
}

static void file_close(struct sufs_dev *dev)
{
	struct file_dev *f = dev->priv;
	if (f->dfd >= 0)
		close(f->dfd);
	close(f->fd);
	free(f);
}

static const struct sufs_dev_ops file_ops = {
	.read = file_read,
	.write = file_write,
	.barrier = file_barrier,
	.resize = file_resize,
	.close = file_close,
	.prefetch = file_prefetch,
};

/* The O_DIRECT descriptor of f and its alignment: 0, -EINVAL where the
 * file system has no direct I/O, -ESTALE when path no longer names fd's
 * file. */
static int open_direct(const char *path, int oflags, int fd, struct file_dev *f)
{
	struct stat st, dst;
	unsigned a = 0;
	int sector;
#ifdef STATX_DIOALIGN
	struct statx sx;

	if (!statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) && (sx.stx_mask & STATX_DIOALIGN)) {
		if (!sx.stx_dio_offset_align)
			return -EINVAL; /* the file system says: no direct I/O */
		a = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align
								    : sx.stx_dio_mem_align;
	}
#endif
	if (!a && !ioctl(fd, BLKSSZGET, &sector) && sector > 0)
		a = (unsigned)sector;
	f->align = a ? a : 4096;
	f->dfd = open(path, oflags | O_CLOEXEC | O_DIRECT);
	if (f->dfd < 0)
		return -errno;
	/* opened by name a second time: the same file, or none */
	if (fstat(fd, &st) || fstat(f->dfd, &dst) || st.st_dev != dst.st_dev ||
	    st.st_ino != dst.st_ino) {
		close(f->dfd);
		f->dfd = -1;
		return -ESTALE;
	}
	return 0;
}

int sufs_dev_open(const char *path, unsigned flags, struct sufs_dev **out)
{
	struct sufs_dev *dev;
	struct file_dev *f;
	struct stat st;
	int oflags = (flags & SUFS_DEV_RDWR) ? O_RDWR : O_RDONLY;
	int fd, fl, err;

	if (flags & SUFS_DEV_CREATE)
		oflags |= O_CREAT;
	/* O_NONBLOCK: a fifo must not hang the open; it is refused below */
	fd = open(path, oflags | O_CLOEXEC | O_NONBLOCK, 0666);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -SUFS_ENOTIMAGE;
	}
	if ((fl = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISBLK(st.st_mode) && (flags & SUFS_DEV_EXCL)) {
		/* reopen exclusively: refuse a device that is mounted or in use */
		int fd2 = open(path, oflags | O_CLOEXEC | O_EXCL);
		if (fd2 < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		close(fd);
		fd = fd2;
	}
	/* one writer at a time: two programs writing one image would each
	 * overwrite the other's blocks (the lock goes with the descriptor;
	 * where the file system has no locks, ENOLCK and the like, the image
	 * is written without one) */
	if ((flags & SUFS_DEV_RDWR) && flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
		close(fd);
		return -SUFS_EINUSE;
	}
	dev = calloc(1, sizeof(*dev));
	f = calloc(1, sizeof(*f));
	if (!dev || !f || !(dev->name = strdup(path))) {
		free(dev ? dev->name : NULL);
		free(dev);
		free(f);
		close(fd);
		return -ENOMEM;
	}
	f->fd = fd;
	f->dfd = -1;
	if ((flags & SUFS_DEV_DIRECT) && (err = open_direct(path, oflags & ~O_CREAT, fd, f))) {
		free(dev->name);
		free(dev);
		free(f);
		close(fd);
		return err;
	}
	dev->ops = &file_ops;
	dev->priv = f;
	dev->writable = !!(flags & SUFS_DEV_RDWR);
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes = 0;
		dev->is_blockdev = 1;
		if (ioctl(fd, BLKGETSIZE64, &bytes))
			bytes = 0;
		dev->size = bytes;
	} else {
		dev->size = (uint64_t)st.st_size;
	}
	*out = dev;
	return 0;
}

int sufs_dev_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	int err = dev->ops->read(dev, off, buf, len);
	if (!err) {
		dev->reads++;
		dev->bytes_read += len;
	}
	return err;
}

int sufs_dev_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	int err;
	if (!dev->writable)
		return -EROFS;
	err = dev->ops->write(dev, off, buf, len);
	if (!err) {
		dev->writes++;
		dev->bytes_written += len;
		if (off + len > dev->size && !dev->is_blockdev)
			dev->size = off + len;
	} else if (!dev->write_error) {
		dev->write_error = err;
	}
	return err;
}

int sufs_dev_barrier(struct sufs_dev *dev)
{
	int err;
	if (!dev->writable)
		return 0;
	err = dev->ops->barrier(dev);
	if (!err)
		dev->barriers++;
	else if (!dev->write_error)
		dev->write_error = err;
	return err;
}

int sufs_dev_resize(struct sufs_dev *dev, uint64_t bytes)
{
	if (!dev->writable)
		return -EROFS;
	if (!dev->ops->resize)
		return -EOPNOTSUPP;
	return dev->ops->resize(dev, bytes);
}

void sufs_dev_prefetch(struct sufs_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->ops->prefetch && off < dev->size)
		dev->ops->prefetch(dev, off, len < dev->size - off ? len : dev->size - off);
}

void sufs_dev_close(struct sufs_dev *dev)
{
	if (!dev)
		return;
	dev->ops->close(dev);
	free(dev->name);
	free(dev);
}

int sufs_dev_zero(struct sufs_dev *dev, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[65536];
	int err;

	if (!dev->writable)
		return -EROFS;
	if (dev->ops == &file_ops) {
		struct file_dev *f = dev->priv;
		if (dev->is_blockdev) {
			uint64_t range[2] = { off, len };
			if (ioctl(f->fd, BLKZEROOUT, range) == 0)
				return 0;
		} else if (off >= dev->size) {
			return 0; /* past the end of a file: already zeros */
		} else if (fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				     (off_t)off, (off_t)len) == 0) {
			return 0;
		}
	}
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		err = sufs_dev_write(dev, off, zeros, n);
		if (err)
			return err;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * libblkid does not know sufs: recognise it here, as fsck.sufs would.  The
 * primary superblock counts if it carries the magic, whole or damaged (a
 * check could repair the file system); else a backup does, whole, where
 * the default group size of its block size puts group 1's: fsck.sufs
 * would find it there.  An image whose mkfs never finished carries no
 * magic (mkfs.sufs writes the primary last) and is fair game.
 */
static char *probe_sufs(const char *path)
{
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super sb;
	const char *state = "";
	char buf[200];
	uint32_t bs;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (pread(fd, raw, sizeof(raw), SUFS_SB_OFFSET) == (ssize_t)sizeof(raw)) {
		sufs_super_decode(raw, &sb);
		if (sb.magic == SUFS_MAGIC) {
			if (sb.checksum != sufs_super_csum(raw) || sufs_super_check(&sb, 0, NULL))
				state = ", its superblock damaged";
			goto found;
		}
	}
	for (bs = SUFS_MIN_BLOCK_SIZE; bs <= SUFS_MAX_BLOCK_SIZE; bs *= 2) {
		uint64_t off = (uint64_t)8 * bs * bs;
		if (pread(fd, raw, sizeof(raw), (off_t)off) != (ssize_t)sizeof(raw))
			break;
		sufs_super_decode(raw, &sb);
		if (sb.magic == SUFS_MAGIC && sb.checksum == sufs_super_csum(raw) &&
		    !sufs_super_check(&sb, 0, NULL) && sb.sb_group == 1 &&
		    (uint64_t)sb.blocks_per_group * sb.block_size == off) {
			state = ", its primary superblock lost but a backup whole";
			goto found;
		}
	}
	close(fd);
	return NULL;
found:
	close(fd);
	if (sb.label[0] && !*state)
		snprintf(buf, sizeof(buf), "sufs file system (label \"%.*s\")",
			 (int)strnlen((const char *)sb.label, sizeof(sb.label)), sb.label);
	else
		snprintf(buf, sizeof(buf), "sufs file system%s", state);
	return strdup(buf);
}

int sufs_dev_probe(const char *path, char **what)
{
	blkid_probe pr;
	const char *type = NULL, *label = NULL, *pttype = NULL;
	char buf[512];
	int rc;

	*what = probe_sufs(path);
	if (*what)
		return 0;
	pr = blkid_new_probe_from_filename(path);
	if (!pr)
		return errno ? -errno : -EIO;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0) {
		blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
		blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
		blkid_probe_lookup_value(pr, "PTTYPE", &pttype, NULL);
		if (type && label)
			snprintf(buf, sizeof(buf), "%s file system (label \"%s\")", type, label);
		else if (type)
			snprintf(buf, sizeof(buf), "%s file system", type);
		else if (pttype)
			snprintf(buf, sizeof(buf), "%s partition table", pttype);
		else
			snprintf(buf, sizeof(buf), "unknown signature");
		*what = strdup(buf);
	} else if (rc == -2) {
		*what = strdup("several conflicting signatures");
	}
	blkid_free_probe(pr);
	return 0;
}

int sufs_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}
