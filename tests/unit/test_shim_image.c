/* test_shim_image.c: the shim's image core — archive path checks, whiteouts, digests, references, manifest/index/config/docker-save parsers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agents/shim/image_core.h"
#include "mtserr.h"

/* A string literal and its length. */
#define S(lit) lit, sizeof(lit) - 1

#define D1 \
	"sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 \
	"sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define D3 \
	"sha256:3333333333333333333333333333333333333333333333333333333333333333"

static void
test_path_clean(void **st)
{
	static const struct {
		const char *in, *out; /* out NULL: refused */
	} cases[] = {
		{ "a/b/c", "a/b/c" },
		{ "./a/b", "a/b" },
		{ "a//b/", "a/b" },
		{ "./", "" },
		{ ".", "" },
		{ "a/./b/.", "a/b" },
		{ "..foo/bar", "..foo/bar" },
		{ "a/..b", "a/..b" },
		{ "/etc/passwd", NULL },
		{ "../../etc/x", NULL },
		{ "a/../../b", NULL },
		{ "a/..", NULL },
		{ "..", NULL },
		{ "./../x", NULL },
	};
	char out[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = mts_archive_path_clean(cases[i].in, out, sizeof(out));
		if (cases[i].out == NULL) {
			if (rc != -MTS_ERR_INVAL)
				fail_msg("%s accepted as %s", cases[i].in, out);
		} else {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].out);
		}
	}
	assert_int_equal(mts_archive_path_clean("abcdef", out, 4),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_archive_path_clean(NULL, out, sizeof(out)),
	    -MTS_ERR_INVAL);
}

static void
test_whiteouts(void **st)
{
	enum mts_whiteout k;
	char t[256];

	assert_int_equal(mts_whiteout_classify("etc/passwd", &k, t, sizeof(t)),
	    0);
	assert_int_equal(k, MTS_WH_NONE);
	assert_int_equal(mts_whiteout_classify("etc/.wh.passwd", &k, t,
	                     sizeof(t)),
	    0);
	assert_int_equal(k, MTS_WH_FILE);
	assert_string_equal(t, "etc/passwd");
	assert_int_equal(mts_whiteout_classify(".wh.top", &k, t, sizeof(t)), 0);
	assert_int_equal(k, MTS_WH_FILE);
	assert_string_equal(t, "top");
	assert_int_equal(mts_whiteout_classify("var/lib/.wh..wh..opq", &k, t,
	                     sizeof(t)),
	    0);
	assert_int_equal(k, MTS_WH_OPAQUE);
	assert_string_equal(t, "var/lib");
	assert_int_equal(mts_whiteout_classify(".wh..wh..opq", &k, t,
	                     sizeof(t)),
	    0);
	assert_int_equal(k, MTS_WH_OPAQUE);
	assert_string_equal(t, "");
	/* Malformed: nothing named, reserved prefix, dot names. */
	assert_int_equal(mts_whiteout_classify("a/.wh.", &k, t, sizeof(t)),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_whiteout_classify("a/.wh..wh.x", &k, t, sizeof(t)),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_whiteout_classify("a/.wh...", &k, t, sizeof(t)),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_whiteout_classify("a/.wh..", &k, t, sizeof(t)),
	    -MTS_ERR_INVAL);
	/* A name merely containing .wh. is an ordinary file. */
	assert_int_equal(mts_whiteout_classify("a/x.wh.y", &k, t, sizeof(t)),
	    0);
	assert_int_equal(k, MTS_WH_NONE);
}

static void
test_digests(void **st)
{
	uint8_t sha[32];
	char out[MTS_DIGEST_LEN + 1];

	assert_int_equal(mts_digest_valid(D1), 0);
	assert_int_equal(mts_digest_valid("sha256:abc"), -MTS_ERR_INVAL);
	assert_int_equal(
	    mts_digest_valid(
	        "sha512:"
	        "1111111111111111111111111111111111111111111111111111111111111111"),
	    -MTS_ERR_INVAL);
	assert_int_equal(
	    mts_digest_valid(
	        "sha256:"
	        "111111111111111111111111111111111111111111111111111111111111111G"),
	    -MTS_ERR_INVAL);
	assert_int_equal(
	    mts_digest_valid(
	        "sha256:"
	        "A111111111111111111111111111111111111111111111111111111111111111"),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_digest_valid(NULL), -MTS_ERR_INVAL);
	memset(sha, 0xab, sizeof(sha));
	mts_digest_format(out, sha);
	assert_int_equal(mts_digest_valid(out), 0);
	assert_memory_equal(out, "sha256:abab", 11);
}

static void
test_refs(void **st)
{
	struct mts_ref r;

	assert_int_equal(mts_ref_parse("busybox", &r), 0);
	assert_string_equal(r.registry, "registry-1.docker.io");
	assert_string_equal(r.repo, "library/busybox");
	assert_string_equal(r.tag, "latest");
	assert_int_equal(mts_ref_parse("127.0.0.1:18000/team/app:v1.2", &r), 0);
	assert_string_equal(r.registry, "127.0.0.1:18000");
	assert_string_equal(r.repo, "team/app");
	assert_string_equal(r.tag, "v1.2");
	assert_int_equal(mts_ref_parse("localhost/app@" D1, &r), 0);
	assert_string_equal(r.registry, "localhost");
	assert_string_equal(r.repo, "app");
	assert_string_equal(r.digest, D1);
	assert_string_equal(r.tag, "");
	assert_int_equal(mts_ref_parse("user/app:1", &r), 0);
	assert_string_equal(r.registry, "registry-1.docker.io");
	assert_string_equal(r.repo, "user/app");
	assert_int_equal(mts_ref_parse("", &r), -MTS_ERR_INVAL);
	assert_int_equal(mts_ref_parse("App", &r), -MTS_ERR_INVAL);
	assert_int_equal(mts_ref_parse("app:", &r), -MTS_ERR_INVAL);
	assert_int_equal(mts_ref_parse("app@sha256:12", &r), -MTS_ERR_INVAL);
	assert_int_equal(mts_ref_parse("reg.io/", &r), -MTS_ERR_INVAL);
}

static const char index_json[] =
    "{\"schemaVersion\":2,\"manifests\":["
    "{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
    "\"digest\":\"" D1 "\",\"size\":10,"
    "\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\"}},"
    "{\"digest\":\"" D2 "\",\"size\":20,"
    "\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"},"
    "\"annotations\":{\"org.opencontainers.image.ref.name\":\"latest\","
    "\"io.containerd.image.name\":\"busybox:latest\"}}]}";

static void
test_index(void **st)
{
	struct mts_oci_index x;
	enum mts_blob_kind k;
	char err[256];

	assert_int_equal(mts_oci_parse_index(index_json, strlen(index_json), &x,
	                     err, sizeof(err)),
	    0);
	assert_int_equal(x.n, 2);
	assert_int_equal(mts_oci_pick(&x, "linux", "amd64"), 1);
	assert_string_equal(x.m[1].image_name, "busybox:latest");
	assert_string_equal(x.m[1].ref_name, "latest");
	assert_int_equal(x.m[1].size, 20);
	assert_int_equal(mts_oci_pick(&x, "linux", "s390x"), -MTS_ERR_NOTFOUND);
	mts_oci_index_free(&x);
	assert_int_equal(mts_oci_blob_kind(index_json, strlen(index_json), &k,
	                     err, sizeof(err)),
	    0);
	assert_int_equal(k, MTS_BLOB_INDEX);
}

static void
expect_bad_index(const char *json, const char *msg)
{
	struct mts_oci_index x;
	char err[256] = "";

	assert_int_equal(mts_oci_parse_index(json, strlen(json), &x, err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	if (strstr(err, msg) == NULL)
		fail_msg("error \"%s\" does not mention \"%s\"", err, msg);
	mts_oci_index_free(&x);
}

static void
test_index_bad(void **st)
{
	expect_bad_index("", "invalid JSON");
	expect_bad_index("[]", "not an object");
	expect_bad_index("{\"manifests\":[]}", "manifests");
	expect_bad_index("{\"manifests\":[{\"digest\":\"md5:00\"}]}",
	    "manifests[0].digest");
	expect_bad_index("{\"manifests\":[{\"digest\":\"" D1
	                 "\",\"size\":-1}]}",
	    "size");
	expect_bad_index("{\"manifests\":[{\"digest\":\"" D1 "\","
	                 "\"mediaType\":7}]}",
	    "mediaType");
	expect_bad_index("{\"manifests\":[1],\"manifests\":[2]}",
	    "invalid JSON");
}

static const char manifest_json[] =
    "{\"schemaVersion\":2,\"config\":{\"digest\":\"" D1 "\",\"size\":5},"
    "\"layers\":[{\"digest\":\"" D2 "\",\"size\":7,\"mediaType\":"
    "\"application/vnd.oci.image.layer.v1.tar+gzip\"},"
    "{\"digest\":\"" D3 "\",\"size\":9}]}";

static void
test_manifest(void **st)
{
	struct mts_oci_manifest m;
	enum mts_blob_kind k;
	char err[256], bad[600];

	assert_int_equal(mts_oci_parse_manifest(manifest_json,
	                     strlen(manifest_json), &m, err, sizeof(err)),
	    0);
	assert_string_equal(m.config.digest, D1);
	assert_int_equal(m.nlayers, 2);
	assert_string_equal(m.layers[1].digest, D3);
	assert_int_equal(m.layers[0].size, 7);
	mts_oci_manifest_free(&m);
	assert_int_equal(mts_oci_blob_kind(manifest_json, strlen(manifest_json),
	                     &k, err, sizeof(err)),
	    0);
	assert_int_equal(k, MTS_BLOB_MANIFEST);
	snprintf(bad, sizeof(bad), "{\"schemaVersion\":1,\"config\":{}}");
	assert_int_equal(mts_oci_parse_manifest(bad, strlen(bad), &m, err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "schemaVersion"));
	mts_oci_manifest_free(&m);
	snprintf(bad, sizeof(bad),
	    "{\"schemaVersion\":2,\"config\":"
	    "{\"digest\":\"" D1 "\"},\"layers\":[{\"size\":1}]}");
	assert_int_equal(mts_oci_parse_manifest(bad, strlen(bad), &m, err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "layers[0].digest"));
	mts_oci_manifest_free(&m);
	/* Trailing garbage and truncation are refused. */
	assert_int_equal(mts_oci_parse_manifest(manifest_json,
	                     strlen(manifest_json) - 3, &m, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	mts_oci_manifest_free(&m);
}

static void
test_config(void **st)
{
	static const char cfg[] =
	    "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":"
	    "{\"Env\":[\"PATH=/bin\",\"A=1\"],\"Cmd\":[\"sh\"],"
	    "\"Entrypoint\":null,\"WorkingDir\":\"/w\",\"User\":\"nobody\"},"
	    "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"" D1 "\"]}}";
	struct mts_image_config c;
	char err[256];

	assert_int_equal(mts_oci_parse_config(cfg, strlen(cfg), &c, err,
	                     sizeof(err)),
	    0);
	assert_string_equal(c.env[1], "A=1");
	assert_null(c.env[2]);
	assert_string_equal(c.cmd[0], "sh");
	assert_null(c.entrypoint);
	assert_string_equal(c.cwd, "/w");
	assert_string_equal(c.user, "nobody");
	assert_int_equal(c.ndiff, 1);
	mts_image_config_free(&c);
	assert_int_equal(mts_oci_parse_config(S("{\"config\":{}}"), &c, err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "rootfs"));
	mts_image_config_free(&c);
	assert_int_equal(
	    mts_oci_parse_config(S("{\"rootfs\":{\"diff_ids\":[\"x\"]}}"), &c,
	        err, sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "diff_ids[0]"));
	mts_image_config_free(&c);
	assert_int_equal(
	    mts_oci_parse_config(S("{\"config\":{\"Env\":[1]},\"rootfs\":{}}"),
	        &c, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "Env[0]"));
	mts_image_config_free(&c);
}

static void
test_docker_manifest(void **st)
{
	static const char ok[] =
	    "[{\"Config\":\"abc.json\",\"RepoTags\":"
	    "[\"busybox:latest\"],\"Layers\":[\"l1/layer.tar\","
	    "\"l2/layer.tar\"]}]";
	struct mts_docker_manifest m;
	char err[256];

	assert_int_equal(mts_docker_parse_manifest(ok, strlen(ok), &m, err,
	                     sizeof(err)),
	    0);
	assert_string_equal(m.config, "abc.json");
	assert_int_equal(m.nlayers, 2);
	assert_string_equal(m.tags[0], "busybox:latest");
	mts_docker_manifest_free(&m);
	assert_int_equal(mts_docker_parse_manifest(S("[]"), &m, err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	mts_docker_manifest_free(&m);
	assert_int_equal(mts_docker_parse_manifest(S("[{\"Config\":\"a\"}]"),
	                     &m, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "Layers"));
	mts_docker_manifest_free(&m);
}

static void
test_image_key(void **st)
{
	char k[64];

	mts_image_key("a:b", k, sizeof(k));
	assert_string_equal(k, "613a62");
	mts_image_key("abcdef", k, 5); /* truncated, never overflows */
	assert_string_equal(k, "6162");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_clean),
		cmocka_unit_test(test_whiteouts),
		cmocka_unit_test(test_digests),
		cmocka_unit_test(test_refs),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_index_bad),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_docker_manifest),
		cmocka_unit_test(test_image_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
