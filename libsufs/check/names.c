/*
 * names.c - the names of the directory pass 2 is checking, to find a name
 * given twice.
 *
 * An open-addressing table, kept at most half full, over an arena of
 * entries (struct nameset).  It is emptied for each directory
 * (names_reset()); names_lookup() finds a name, or the slot where
 * names_put() adds it.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdlib.h>

/* An entry of the arena: the inode (4 bytes, host order), the name's
 * length (1 byte) and the name. */
#define NS_HDR 5u

void names_reset(struct nameset *ns)
{
	if (ns->n)
		memset(ns->slots, 0, ns->nslots * sizeof(*ns->slots));
	ns->used = 0;
	ns->n = 0;
	ns->suffix = 0;
}

void names_free(struct nameset *ns)
{
	free(ns->arena);
	free(ns->slots);
	memset(ns, 0, sizeof(*ns));
}

/* The slot that holds name, or the empty slot where it would go (the table
 * is never full). */
static struct nameslot *names_slot(const struct nameset *ns, const uint8_t *name,
				   uint32_t len, uint32_t hash)
{
	size_t i = hash & (ns->nslots - 1);
	struct nameslot *sl;
	const uint8_t *e;

	for (;; i = (i + 1) & (ns->nslots - 1)) {
		sl = &ns->slots[i];
		if (!sl->off)
			return sl;
		e = ns->arena + sl->off - 1;
		if (sl->hash == hash && e[4] == len && memcmp(e + NS_HDR, name, len) == 0)
			return sl;
	}
}

int names_has(const struct nameset *ns, const uint8_t *name, uint32_t len)
{
	return ns->n && names_slot(ns, name, len, name_hash(name, len))->off != 0;
}

/* Room for one more name of len bytes: 0 or -ENOMEM.  A larger table
 * moves the slots. */
static int names_room(struct nameset *ns, uint32_t len)
{
	size_t i, need = NS_HDR + len;

	if (2 * (ns->n + 1) > ns->nslots) {
		/* keep the table at most half full */
		size_t cap = ns->nslots ? 2 * ns->nslots : 256, nold = ns->nslots;
		struct nameslot *old = ns->slots, *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		ns->slots = slots;
		ns->nslots = cap;
		for (i = 0; i < nold; i++) {
			const uint8_t *e = ns->arena + (old[i].off ? old[i].off - 1 : 0);
			if (old[i].off)
				*names_slot(ns, e + NS_HDR, e[4], old[i].hash) = old[i];
		}
		free(old);
	}
	if (ns->used + need > ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 4096;
		uint8_t *a;

		while (cap < ns->used + need)
			cap *= 2;
		if (cap > UINT32_MAX || !(a = realloc(ns->arena, cap)))
			return -ENOMEM;
		ns->arena = a;
		ns->cap = cap;
	}
	return 0;
}

/* Look name up, with room to add it: *slot holds it (its off is not 0), or
 * is where it goes (names_put()).  0 or -ENOMEM. */
int names_lookup(struct nameset *ns, const uint8_t *name, uint32_t len,
		 struct nameslot **slot)
{
	uint32_t hash = name_hash(name, len);
	int err = names_room(ns, len);

	if (err)
		return err;
	*slot = names_slot(ns, name, len, hash);
	if (!(*slot)->off)
		(*slot)->hash = hash;
	return 0;
}

/* The inode the entry in slot names. */
uint32_t names_ino(const struct nameset *ns, const struct nameslot *slot)
{
	uint32_t ino;

	memcpy(&ino, ns->arena + slot->off - 1, 4);
	return ino;
}

/* Add name where names_lookup() found it missing. */
void names_put(struct nameset *ns, struct nameslot *slot, const uint8_t *name,
	       uint32_t len, uint32_t ino)
{
	memcpy(ns->arena + ns->used, &ino, 4);
	ns->arena[ns->used + 4] = (uint8_t)len;
	memcpy(ns->arena + ns->used + NS_HDR, name, len);
	slot->off = (uint32_t)ns->used + 1;
	ns->used += NS_HDR + len;
	ns->n++;
}
