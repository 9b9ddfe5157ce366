/*
 * acl.c - POSIX ACLs as bytes: the value of system.posix_acl_access and
 * system.posix_acl_default, in Linux's xattr form (man/sufs.5): a u32
 * version (2), then entries of u16 tag, u16 permissions, u32 id, each
 * little-endian.  The library keeps ACLs as they come and checks them,
 * and keeps a file's mode and its access ACL in step (acl(5)): the owner's
 * bits are the owner entry's, the group bits the mask's (the group entry's
 * when there is no mask), the others' the other entry's.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>

/*
 * The rules are Linux's (posix_acl_valid()): the owner entry, the named
 * users, the group entry, the named groups, the mask, the other entry,
 * in that order; each of owner, group and other once, the mask at most
 * once and needed when there are named entries; permissions rwx at most.
 */
int sufs_acl_check(const void *value, size_t len, const char **why)
{
	const uint8_t *v = value, *e;
	unsigned state = ACL_USER_OBJ, tag, named = 0;
	size_t n, i;
	const char *dummy;

	if (!why)
		why = &dummy;
	*why = NULL;
	if (len < ACL_HDR || (len - ACL_HDR) % ACL_ENTRY)
		*why = "its length is not a header and whole entries";
	else if (get32(v + ACL_VERSION) != ACL_XATTR_VERSION)
		*why = "an unknown version";
	n = *why ? 0 : (len - ACL_HDR) / ACL_ENTRY;
	for (i = 0; i < n && !*why; i++) {
		e = v + ACL_HDR + i * ACL_ENTRY;
		tag = get16(e + ACL_E_TAG);
		if (get16(e + ACL_E_PERM) & ~7u) {
			*why = "permissions other than rwx";
			break;
		}
		if (tag == ACL_USER_OBJ && state == ACL_USER_OBJ)
			state = ACL_USER;
		else if (tag == ACL_GROUP_OBJ && state == ACL_USER)
			state = ACL_GROUP;
		else if (tag == ACL_MASK && state == ACL_GROUP)
			state = ACL_OTHER;
		else if (tag == ACL_OTHER && (state == ACL_OTHER || (state == ACL_GROUP && !named)))
			state = 0;
		else if ((tag == ACL_USER || tag == ACL_GROUP) && state == tag)
			named = 1;
		else
			*why = "entries missing, repeated, unknown or out of order";
	}
	if (!*why && state != 0)
		*why = n ? "entries missing or out of order" : "no entries";
	return *why ? -EINVAL : 0;
}

/* The entry of tag in an ACL that passed sufs_acl_check(), or NULL. */
static uint8_t *acl_find(uint8_t *v, size_t len, unsigned tag)
{
	size_t off;

	for (off = ACL_HDR; off + ACL_ENTRY <= len; off += ACL_ENTRY)
		if (get16(v + off + ACL_E_TAG) == tag)
			return v + off;
	return NULL;
}

int acl_is_mode(const void *value, size_t len)
{
	(void)value;
	return len == ACL_HDR + 3 * ACL_ENTRY;
}

uint16_t acl_mode(const void *value, size_t len, uint16_t mode)
{
	uint8_t *v = (uint8_t *)value; /* only read */
	uint8_t *u = acl_find(v, len, ACL_USER_OBJ), *o = acl_find(v, len, ACL_OTHER);
	uint8_t *g = acl_find(v, len, ACL_MASK);

	if (!g)
		g = acl_find(v, len, ACL_GROUP_OBJ);
	mode &= (uint16_t)~0777u;
	mode |= (uint16_t)((get16(u + ACL_E_PERM) << 6) | (get16(g + ACL_E_PERM) << 3) |
			   get16(o + ACL_E_PERM));
	return mode;
}

unsigned acl_group_obj(const void *value, size_t len)
{
	return get16(acl_find((uint8_t *)value, len, ACL_GROUP_OBJ) + ACL_E_PERM);
}

void acl_chmod(void *value, size_t len, uint16_t mode)
{
	uint8_t *u = acl_find(value, len, ACL_USER_OBJ), *o = acl_find(value, len, ACL_OTHER);
	uint8_t *g = acl_find(value, len, ACL_MASK);

	if (!g)
		g = acl_find(value, len, ACL_GROUP_OBJ);
	put16(u + ACL_E_PERM, (uint16_t)(mode >> 6 & 7));
	put16(g + ACL_E_PERM, (uint16_t)(mode >> 3 & 7));
	put16(o + ACL_E_PERM, (uint16_t)(mode & 7));
}
