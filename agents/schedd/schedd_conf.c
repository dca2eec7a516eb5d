/* schedd_conf.c: the keys of mts.conf's [schedd] section — the node's capacity (read from /proc unless cpus/memory say otherwise), the reserve kept back for the system, the default lease ttl, who may call — and their loading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "log.h"
#include "schedd.h"

static const struct mts_cfg_schema keys[] = {
	{ "schedd", "cpus", MTS_CFG_STR, "",
	    "CPUs this node offers (\"2\", \"0.5\"); empty: the online CPUs" },
	{ "schedd", "memory", MTS_CFG_SIZE, "0",
	    "memory this node offers; 0: MemTotal of /proc/meminfo" },
	{ "schedd", "reserve_cpus", MTS_CFG_STR, "0",
	    "CPUs kept back for the system and the agents" },
	{ "schedd", "reserve_memory", MTS_CFG_SIZE, "0",
	    "memory kept back for the system and the agents" },
	{ "schedd", "lease_ttl", MTS_CFG_DURATION, "10s",
	    "how long a prepared lease holds its resources when the owner "
	    "names no ttl" },
	{ "schedd", "acl", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed every call (the local reconciled, "
	    "mtsctl)" },
	{ "schedd", "acl_relay", MTS_CFG_LIST, "",
	    "users allowed the calls other nodes make through the relay "
	    "(prepare, commit, abort, ledger, availability): the node's "
	    "gossipd" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table schedd_conf = { "schedd", keys };
MTS_CONF_TABLE(schedd_conf);

int
schedd_parse_cpus(const char *s, uint32_t *millis)
{
	uint64_t whole = 0, frac = 0, scale = 1000;
	const char *p = s;
	int digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 4000000)
			return -1;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (scale == 1)
				return -1; /* finer than a millicore */
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p != '\0' || digits == 0)
		return -1;
	*millis = (uint32_t)(whole * 1000 + frac);
	return 0;
}

/* MemTotal of /proc/meminfo in bytes, 0 if unreadable. */
static uint64_t
meminfo_total(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static int
cpus_key(const struct mts_cfg *cfg, const char *key, uint32_t dflt,
    uint32_t *out)
{
	const char *v = mts_cfg_str(cfg, SCHEDD_SECTION, key);

	if (v == NULL || *v == '\0') {
		*out = dflt;
		return 0;
	}
	if (schedd_parse_cpus(v, out) < 0) {
		log_warnx("[schedd] %s = '%s': expected a number of CPUs such "
		          "as 2 or 0.5",
		    key, v);
		return -1;
	}
	return 0;
}

int
schedd_conf_load(struct schedd_conf *c, const struct mts_cfg *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct mts_res total;

	memset(c, 0, sizeof(*c));
	if (cpus_key(cfg, "cpus", (uint32_t)(ncpu > 0 ? ncpu : 1) * 1000,
	        &total.cpu_millis) < 0 ||
	    cpus_key(cfg, "reserve_cpus", 0, &c->reserve.cpu_millis) < 0)
		return -1;
	total.memory = (uint64_t)mts_cfg_int(cfg, SCHEDD_SECTION, "memory");
	if (total.memory == 0)
		total.memory = meminfo_total();
	c->reserve.memory =
	    (uint64_t)mts_cfg_int(cfg, SCHEDD_SECTION, "reserve_memory");
	c->capacity.cpu_millis = total.cpu_millis > c->reserve.cpu_millis
	    ? total.cpu_millis - c->reserve.cpu_millis
	    : 0;
	c->capacity.memory = total.memory > c->reserve.memory
	    ? total.memory - c->reserve.memory
	    : 0;
	c->lease_ttl_ms = mts_cfg_int(cfg, SCHEDD_SECTION, "lease_ttl");
	if (c->lease_ttl_ms <= 0) {
		log_warnx("[schedd] lease_ttl must be more than 0");
		return -1;
	}
	return 0;
}
