/* memdev.c - a sufs device over bytes in memory (see memdev.h). */
#include "config.h"
#include "memdev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mem {
	uint8_t *bytes;
	size_t size;
};

static int mem_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	struct mem *m = dev->priv;
	size_t n = 0;

	if (off < m->size)
		n = m->size - off < len ? (size_t)(m->size - off) : len;
	if (n)
		memcpy(buf, m->bytes + off, n);
	memset((uint8_t *)buf + n, 0, len - n);
	return 0;
}

static int mem_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct mem *m = dev->priv;

	if (off > m->size || len > m->size - off)
		return -ENOSPC;
	memcpy(m->bytes + off, buf, len);
	return 0;
}

static int mem_barrier(struct sufs_dev *dev)
{
	(void)dev;
	return 0;
}

static void mem_close(struct sufs_dev *dev)
{
	free(dev->priv);
}

static const struct sufs_dev_ops mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.barrier = mem_barrier,
	.close = mem_close,
};

struct sufs_dev *memdev_new(uint8_t *bytes, size_t size, int writable)
{
	struct sufs_dev *dev = calloc(1, sizeof(*dev));
	struct mem *m = calloc(1, sizeof(*m));

	if (!dev || !m || !(dev->name = strdup("memory"))) {
		free(dev);
		free(m);
		return NULL;
	}
	m->bytes = bytes;
	m->size = size;
	dev->ops = &mem_ops;
	dev->priv = m;
	dev->size = size;
	dev->writable = writable;
	return dev;
}
