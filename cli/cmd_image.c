/* cmd_image.c: `mtsctl image import|pull|ls|rm` — the node's image store through shim.sock. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtsctl.h"
#include "shimctl.h"

#define IMAGE_TMO (10 * 60 * 1000)

static json_t *
image_json(const Mts__Shim__ImageInfo *i)
{
	char size[32];

	if (i->size >= (10u << 20))
		snprintf(size, sizeof(size), "%.1fM", i->size / 1048576.0);
	else
		snprintf(size, sizeof(size), "%.1fK", i->size / 1024.0);
	return json_pack("{ss ss ss sI ss sI sI sI}", "name", i->name, "id",
	    i->id, "manifest", i->manifest, "size", (json_int_t)i->size,
	    "size_h", size, "layers", (json_int_t)i->layers, "created_at",
	    (json_int_t)i->created_at, "tasks", (json_int_t)i->tasks);
}

static const struct mtsctl_col image_cols[] = {
	{ "name", "NAME" },
	{ "id", "ID" },
	{ "size_h", "SIZE" },
	{ "layers", "LAYERS" },
	{ "tasks", "TASKS" },
	{ NULL, NULL },
};

static int
print_one(struct mtsctl *ctx, const Mts__Shim__ImageInfo *i)
{
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx, image_json(i), image_cols);
	else
		printf("%s %s\n", i->name, i->id);
	return 0;
}

static int
cmd_import(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'n' }, { NULL, 0, NULL, 0 }
	};
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ImageImportReq im = MTS__SHIM__IMAGE_IMPORT_REQ__INIT;
	Mts__Shim__Reply *rep;
	char path[PATH_MAX];
	int c, rc;

	while ((c = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		if (c != 'n')
			return mtsctl_usage(ctx);
		im.name = optarg;
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	/* The shim resolves nothing relative to our directory. */
	if (realpath(argv[optind], path) == NULL) {
		mtsctl_err("%s: no such file or directory", argv[optind]);
		return MTSCTL_ENOTFOUND;
	}
	im.path = path;
	req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_IMPORT;
	req.image_import = &im;
	if ((rc = shimctl_call(ctx, &req, &rep,
	         MTS__SHIM__REPLY__BODY_IMAGE_IMPORT, IMAGE_TMO)))
		return rc;
	print_one(ctx, rep->image_import->image);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_pull(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = { { "insecure", no_argument, NULL,
		                                'k' },
		{ "from-peers", no_argument, NULL, 'P' },
		{ "no-peers", no_argument, NULL, 'R' }, { NULL, 0, NULL, 0 } };
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ImagePullReq pl = MTS__SHIM__IMAGE_PULL_REQ__INIT;
	Mts__Shim__Reply *rep;
	int c, rc;

	while ((c = getopt_long(argc, argv, "k", lo, NULL)) != -1) {
		if (c == 'k')
			pl.insecure = 1;
		else if (c == 'P' || c == 'R')
			pl.source = c == 'P' ? "peers" : "registry";
		else
			return mtsctl_usage(ctx);
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	pl.ref = argv[optind];
	req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_PULL;
	req.image_pull = &pl;
	if ((rc = shimctl_call(ctx, &req, &rep,
	         MTS__SHIM__REPLY__BODY_IMAGE_PULL, IMAGE_TMO)))
		return rc;
	print_one(ctx, rep->image_pull->image);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_ls(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ImageListReq ls = MTS__SHIM__IMAGE_LIST_REQ__INIT;
	Mts__Shim__Reply *rep;
	json_t *rows;
	size_t i;
	int rc;

	if (argc != 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_LIST;
	req.image_list = &ls;
	if ((rc = shimctl_call(ctx, &req, &rep,
	         MTS__SHIM__REPLY__BODY_IMAGE_LIST, 0)))
		return rc;
	rows = json_array();
	for (i = 0; i < rep->image_list->n_images; i++)
		json_array_append_new(rows,
		    image_json(rep->image_list->images[i]));
	mtsctl_print_rows(ctx, rows, image_cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_rm(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = { { "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 } };
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ImageRemoveReq rm = MTS__SHIM__IMAGE_REMOVE_REQ__INIT;
	Mts__Shim__Reply *rep;
	int c, rc;

	while ((c = getopt_long(argc, argv, "f", lo, NULL)) != -1) {
		if (c != 'f')
			return mtsctl_usage(ctx);
		rm.force = 1;
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	rm.name = argv[optind];
	req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_REMOVE;
	req.image_remove = &rm;
	if ((rc = shimctl_call(ctx, &req, &rep,
	         MTS__SHIM__REPLY__BODY_IMAGE_REMOVE, 0)))
		return rc;
	if (ctx->fmt == MTSCTL_FMT_JSON) /* a table prints nothing */
		mtsctl_print_obj(ctx, json_pack("{ss}", "removed", rm.name),
		    NULL);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{ "import", cmd_import, "[--name NAME] FILE|DIR",
	    "import an OCI layout (dir or archive) or a docker-save archive",
	    "DESCRIPTION\n"
	    "    Imports an image into this node's store: an OCI image layout\n"
	    "    directory, a tar of one (optionally compressed), or a\n"
	    "    `docker save` archive. Every blob's digest is checked and\n"
	    "    nothing is stored when anything is wrong. The name comes from\n"
	    "    the image (io.containerd.image.name, ref.name or RepoTags)\n"
	    "    unless --name gives one.\n" },
	{ "pull", cmd_pull, "[--insecure] [--from-peers|--no-peers] REF",
	    "pull an image from its registry, else from a node that has it",
	    "DESCRIPTION\n"
	    "    Fetches REF ([REGISTRY/]REPO[:TAG][@DIGEST]) for linux/amd64\n"
	    "    over HTTPS (--insecure: plain HTTP), answering bearer-token\n"
	    "    challenges, and verifies every blob before storing it. When\n"
	    "    the registry fails, the image is fetched from another node of\n"
	    "    the cluster that holds it (through gossipd, every blob\n"
	    "    verified by its digest).\n\n"
	    "OPTIONS\n"
	    "    --from-peers   only from other nodes, never a registry\n"
	    "    --no-peers     only from the registry\n" },
	{ "ls", cmd_ls, "", "list the images of this node",
	    "DESCRIPTION\n    Lists stored images with their size and users.\n" },
	{ "rm", cmd_rm, "[-f] NAME", "remove an image",
	    "DESCRIPTION\n"
	    "    Removes NAME and the blobs and layers no other image uses.\n"
	    "    Refused while tasks use it, unless -f.\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_image = {
	.name = "image",
	.summary = "container images on this node",
	.cmds = cmds,
};
