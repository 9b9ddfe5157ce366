/*
 * pool.c - fixed-size objects that come and go by the hundred thousand:
 * the engine's records and edges, the cache's buffers.  Each pool hands
 * out objects of one size, cut from chunks; a freed one goes on a list
 * for the next (its first bytes link the list).  The chunks stay until
 * pool_drain(): as many as the most objects ever live at once.
 *
 * A chunk is 64 KiB (or 16 objects) at first; once a pool holds 256 KiB,
 * chunks are 2 MiB, aligned to 2 MiB and offered to transparent huge
 * pages, so that a big run costs a page fault per 2 MiB, not one per
 * 4 KiB (a first touch of a page costs microseconds, in a virtual machine
 * tens of them: bench/pagefault).  Where the kernel gives no huge page it
 * is just a big chunk; a pool that stays small (fsck's cache of 64
 * blocks) is kept from them by no_huge, as a 2 MiB chunk would be most of
 * its memory.  Objects are cut from the newest chunk as needed:
 * touching a whole chunk at once would evict what the caches hold.
 *
 * Under AddressSanitizer every object is malloc'd and freed, so that a
 * use after free is caught.
 */
#include "config.h"
#include "sufs_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define POOL_CHUNK (64 * 1024)
#define POOL_HUGE ((size_t)2 << 20)

struct chunk {
	struct chunk *next;
	size_t size;                /* bytes, this header included */
	int mapped;                 /* a huge one, from mmap */
	_Alignas(16) unsigned char items[];
};

#if defined(__SANITIZE_ADDRESS__)   /* gcc */
#define POOL_PLAIN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)  /* clang */
#define POOL_PLAIN 1
#endif
#endif

#ifdef POOL_PLAIN
void pool_put(struct pool *p, void *x)
{
	(void)p;
	free(x);
}

void *pool_get(struct pool *p, size_t size)
{
	(void)p;
	return malloc(size);
}
#else
static struct chunk *huge_chunk(void)
{
#if defined(MADV_HUGEPAGE)
	size_t span = 2 * POOL_HUGE;
	char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *start, *end;
	struct chunk *c;

	if (m == MAP_FAILED)
		return NULL;
	start = (char *)(((uintptr_t)m + POOL_HUGE - 1) & ~(uintptr_t)(POOL_HUGE - 1));
	end = start + POOL_HUGE;
	if (start > m)
		munmap(m, (size_t)(start - m));
	if (m + span > end)
		munmap(end, (size_t)(m + span - end));
	madvise(start, POOL_HUGE, MADV_HUGEPAGE);
	c = (struct chunk *)start;
	c->size = POOL_HUGE;
	c->mapped = 1;
	return c;
#else
	return NULL;
#endif
}

static struct chunk *chunk_new(struct pool *p, size_t size)
{
	size_t small = sizeof(struct chunk) + 16 * size;
	struct chunk *c = NULL;

	if (small < POOL_CHUNK)
		small = POOL_CHUNK;
	if (!p->no_huge && p->bytes >= POOL_HUGE / 8 && 16 * size <= POOL_HUGE)
		c = huge_chunk();
	if (!c) {
		if (!(c = malloc(small)))
			return NULL;
		c->size = small;
		c->mapped = 0;
	}
	c->next = p->chunks;
	p->chunks = c;
	p->bytes += c->size;
	return c;
}

void pool_put(struct pool *p, void *x)
{
	memcpy(x, &p->head, sizeof(p->head));
	p->head = x;
}

void *pool_get(struct pool *p, size_t size)
{
	void *x = p->head;

	if (x) {
		memcpy(&p->head, x, sizeof(p->head));
		/* the next one out was freed long ago: ask for it now */
		if (p->head)
			__builtin_prefetch(p->head, 1);
		return x;
	}
	if ((size_t)(p->end - p->next) < size) {
		struct chunk *c = chunk_new(p, size);
		if (!c)
			return NULL;
		p->next = (char *)c->items;
		p->end = (char *)c + c->size;
	}
	x = p->next;
	p->next += size;
	return x;
}
#endif

void pool_drain(struct pool *p)
{
	struct chunk *c;
	int no_huge = p->no_huge;

	while ((c = p->chunks) != NULL) {
		p->chunks = c->next;
		if (c->mapped)
			munmap(c, c->size);
		else
			free(c);
	}
	memset(p, 0, sizeof(*p));
	p->no_huge = no_huge;
}
