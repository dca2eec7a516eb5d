/* test_recon_spec.c: reconciled's service spec to shim TaskSpec translation — image, command, environment (variables without a value left out), limits, restart defaults (any; on-failure for jobs), health checks (disable is NONE), bind and tmpfs mounts, the reservation (reservations, else limits) and the mode names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agents/reconciled/reconciled.h"

static void
test_basic(void **state)
{
	Mts__Service__ServiceSpec s = MTS__SERVICE__SERVICE_SPEC__INIT;
	Mts__Service__KeyValue kv[2] = { MTS__SERVICE__KEY_VALUE__INIT,
		MTS__SERVICE__KEY_VALUE__INIT };
	Mts__Service__KeyValue *kvp[2] = { &kv[0], &kv[1] };
	Mts__Service__Resources lim = MTS__SERVICE__RESOURCES__INIT;
	char *cmd[] = { "sleep", "60" };
	struct rc_spec o;

	s.name = "shop_web";
	s.image = "busybox:1";
	s.command = cmd;
	s.n_command = 2;
	s.has_command = 1;
	kv[0].key = "A";
	kv[0].value = "1";
	kv[0].has_value = 1;
	kv[1].key = "B";
	s.environment = kvp;
	s.n_environment = 2;
	lim.cpu_millis = 500;
	lim.memory = 64 << 20;
	lim.pids = 100;
	s.limits = &lim;
	s.stop_grace_ms = 2000;
	s.mode = "replicated";
	rc_spec_build(&s, 7, "shop_web.1.abcd", &o);
	assert_string_equal(o.spec.id, "shop_web.1.abcd");
	assert_int_equal(o.spec.service_version, 7);
	assert_int_equal(o.spec.spec_digest.len, 16);
	assert_string_equal(o.spec.image, "busybox:1");
	assert_string_equal(o.spec.service, "shop_web");
	assert_true(o.spec.managed);
	assert_int_equal(o.spec.n_command, 2);
	assert_int_equal(o.spec.n_entrypoint, 0);
	assert_int_equal(o.spec.n_env, 1);
	assert_string_equal(o.spec.env[0], "A=1");
	assert_int_equal(o.spec.cpu_millis, 500);
	assert_int_equal(o.spec.memory_limit, 64 << 20);
	assert_int_equal(o.spec.pids_limit, 100);
	assert_int_equal(o.spec.stop_grace_ms, 2000);
	assert_string_equal(o.spec.restart->condition, "any");
	assert_null(o.spec.health);
	assert_string_equal(o.spec.hostname, "shop_web.1.abcd");
	rc_spec_free(&o);
}

static void
test_job_health_mounts(void **state)
{
	Mts__Service__ServiceSpec s = MTS__SERVICE__SERVICE_SPEC__INIT;
	Mts__Service__Health h = MTS__SERVICE__HEALTH__INIT;
	Mts__Service__Mount m[3] = { MTS__SERVICE__MOUNT__INIT,
		MTS__SERVICE__MOUNT__INIT, MTS__SERVICE__MOUNT__INIT };
	Mts__Service__Mount *mp[3] = { &m[0], &m[1], &m[2] };
	Mts__Service__Restart rs = MTS__SERVICE__RESTART__INIT;
	struct rc_spec o;

	s.name = "a_job";
	s.image = "x";
	s.mode = "replicated-job";
	s.hostname = "h1";
	h.disable = 1;
	s.health = &h;
	m[0].type = "bind";
	m[0].source = "/srv";
	m[0].target = "/data";
	m[0].read_only = 1;
	m[1].type = "volume";
	m[1].source = "a_vol";
	m[1].target = "/v";
	m[2].type = "tmpfs";
	m[2].target = "/tmp";
	s.mounts = mp;
	s.n_mounts = 3;
	rc_spec_build(&s, 1, "a_job.1.x", &o);
	assert_string_equal(o.spec.restart->condition, "on-failure");
	assert_non_null(o.spec.health);
	assert_string_equal(o.spec.health->test[0], "NONE");
	assert_int_equal(o.spec.n_mounts, 2); /* the named volume waits */
	assert_string_equal(o.spec.mounts[0]->type, "bind");
	assert_int_equal(o.spec.mounts[0]->n_options, 2);
	assert_string_equal(o.spec.mounts[1]->type, "tmpfs");
	assert_string_equal(o.spec.hostname, "h1");
	rc_spec_free(&o);
	rs.condition = "any"; /* Compose's default: a job would never end */
	s.restart = &rs;
	rc_spec_build(&s, 1, "a_job.1.x", &o);
	assert_string_equal(o.spec.restart->condition, "on-failure");
	rc_spec_free(&o);
	rs.condition = "none";
	rs.max_attempts = 3;
	s.health = NULL;
	rc_spec_build(&s, 1, "a_job.1.x", &o);
	assert_string_equal(o.spec.restart->condition, "none");
	assert_int_equal(o.spec.restart->max_attempts, 3);
	rc_spec_free(&o);
}

static void
test_reservation_mode(void **state)
{
	Mts__Service__ServiceSpec s = MTS__SERVICE__SERVICE_SPEC__INIT;
	Mts__Service__Resources lim = MTS__SERVICE__RESOURCES__INIT;
	Mts__Service__Resources res = MTS__SERVICE__RESOURCES__INIT;
	uint32_t cpu;
	uint64_t mem;

	rc_spec_reservation(&s, &cpu, &mem);
	assert_int_equal(cpu, 0);
	assert_int_equal(mem, 0);
	lim.cpu_millis = 1000;
	lim.memory = 100;
	s.limits = &lim;
	rc_spec_reservation(&s, &cpu, &mem);
	assert_int_equal(cpu, 1000);
	s.reservations = &res; /* empty reservations: the limits */
	rc_spec_reservation(&s, &cpu, &mem);
	assert_int_equal(cpu, 1000);
	res.memory = 50;
	rc_spec_reservation(&s, &cpu, &mem);
	assert_int_equal(cpu, 0);
	assert_int_equal(mem, 50);
	assert_int_equal(rc_spec_mode("global"), RC_GLOBAL);
	assert_int_equal(rc_spec_mode("global-job"), RC_GLOBAL_JOB);
	assert_int_equal(rc_spec_mode("replicated-job"), RC_REPLICATED_JOB);
	assert_int_equal(rc_spec_mode("replicated"), RC_REPLICATED);
	assert_int_equal(rc_spec_mode(NULL), RC_REPLICATED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_job_health_mounts),
		cmocka_unit_test(test_reservation_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
