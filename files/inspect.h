/* What a tensor file holds, from its headers alone (docs/files.md, "dtcast inspect"): every
 * tensor's name, type, shape, bytes and the absolute byte offset of its data; the quantized
 * layouts the tensors form (files/quant_layout.h); totals per type; safetensors metadata; and
 * every problem the readers find, with the same parsers and so the same messages as reading
 * the file. For .npy, .pb, .safetensors, a *.safetensors.index.json, a checkpoint folder, or an
 * ONNX model (.onnx: its initializers and Constant tensors, raw data offsets in the model file,
 * external data files checked like a .pb's), or a GGUF file (.gguf: its metadata as text, its
 * tensors in numpy's axis order, ggml's type in `storage`, block types with dtype undefined).
 * Used by `dtcast inspect` and dtcast.inspect(); not part of the installed API.
 *
 * Only headers are read (pread of the first bytes, or a mapping of which only the headers'
 * pages are touched): a checkpoint of any size is inspected in milliseconds. */
#ifndef DTCAST_FILES_INSPECT_H
#define DTCAST_FILES_INSPECT_H

#include "files/progress.h"
#include "files/quant_layout.h"
#include "files/safetensors.h"
#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

typedef enum dt_insp_kind {
    DT_INSP_NPY,
    DT_INSP_PB,
    DT_INSP_SAFETENSORS,
    DT_INSP_INDEX, /* a *.safetensors.index.json */
    DT_INSP_FOLDER, /* a folder of shards (with or without an index) */
    DT_INSP_ONNX,   /* an ONNX model (.onnx): its initializers and Constant tensors */
    DT_INSP_GGUF,   /* a GGUF file (.gguf): its metadata and tensor infos (files/gguf.h) */
    DT_INSP_UNKNOWN /* missing, or not a kind inspect reads (the one error says which) */
} dt_insp_kind;

/* "npy", "pb", "safetensors", "index", "folder", "onnx", "gguf", "unknown". */
const char *dt_insp_kind_name(dt_insp_kind kind);

/* One file read: the input itself, a shard, the index, or a .pb's external data file. */
typedef struct dt_insp_file {
    char *path;            /* as opened (the folder joined with the name) */
    dt_file_kind kind;
    int ok;                /* its header was read and passed every check */
    uint64_t size;         /* bytes; UINT64_MAX when the file could not be opened */
    uint64_t data_start;   /* where tensor data starts (safetensors 8 + N, .npy after the
                            * header); 0 for others */
    size_t first, ntensors; /* its tensors: dt_inspect.tensors[first, first + ntensors) */
    int gguf;              /* a GGUF file (kind is DT_FILE_UNKNOWN) */
    int has_meta;          /* safetensors "__metadata__", GGUF metadata (values as text: a
                            * scalar in decimal, an array as "[N TYPE]" and its first items);
                            * keys in file order */
    size_t nmeta;
    dt_st_meta *meta;
} dt_insp_file;

/* The part a tensor plays in a quantized layout. */
typedef enum dt_insp_role {
    DT_INSP_PLAIN = 0,
    DT_INSP_CODES,
    DT_INSP_SCALES,
    DT_INSP_GLOBAL,       /* a per-tensor second-level scale */
    DT_INSP_INPUT_SCALE,  /* X.input_scale, X.input_global_scale (activation scales) */
    DT_INSP_SHAPE,        /* X.weight_shape (int4-group) */
    DT_INSP_HINT,         /* m.comfy_quant: ComfyUI's per-layer quantization hint (JSON bytes) */
    DT_INSP_ZERO_POINT,   /* X.weight_zero_point (pack-quantized), X.qzeros (GPTQ, AWQ) */
    DT_INSP_G_IDX         /* X.g_idx (GPTQ): each input row's group */
} dt_insp_role;

/* "plain", "codes", "scales", "global_scale", "input_scale", "shape", "hint", "zero_point",
 * "g_idx". */
const char *dt_insp_role_name(dt_insp_role role);

typedef struct dt_insp_tensor {
    char *name;            /* .npy: the file name without its extension; .pb: "" if unnamed */
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    uint64_t count;        /* elements (1 for 0-d) */
    uint64_t bytes;        /* of its data in the file */
    uint64_t offset;       /* absolute byte offset of the data in files[file] */
    size_t file;           /* index into dt_inspect.files */
    uint64_t begin, end;   /* safetensors: data_offsets (relative to data_start) */
    char *storage;         /* how the data is stored, for .npy, .pb and .onnx ("'<f4', C order",
                            * "raw_data", "external data", "typed field", ", a Constant's value",
                            * ", in a subgraph"); NULL for safetensors */
    dt_insp_role role;
    size_t group;          /* dt_inspect.plan.groups index, DT_QT_NONE when plain */
} dt_insp_tensor;

/* Tensors, elements and bytes of one type. */
typedef struct dt_insp_total {
    dtcast_type type;
    uint64_t tensors, elements, bytes;
} dt_insp_total;

typedef struct dt_insp_problem {
    dtcast_status status;
    int warning;           /* a warning (the file still reads), not an error */
    char *file;            /* the file it is about (NULL: the whole input) */
    char *message;         /* one line, naming the file (and tensor / byte offset) */
} dt_insp_problem;

typedef struct dt_inspect {
    dt_insp_kind kind;
    char *path;
    size_t nfiles;
    dt_insp_file *files;
    size_t ntensors;
    dt_insp_tensor *tensors; /* by file, then in the order of their data in it */
    int has_plan;            /* the quantized layouts were recognised (else a warning says why) */
    dt_qplan plan;           /* over tensors[] in the order above */
    size_t ntotals;
    dt_insp_total *totals;   /* by type code */
    uint64_t elements, bytes; /* over all tensors */
    int has_index;           /* INDEX, or a FOLDER holding one: the index is files[0] */
    size_t index_entries;    /* weight_map entries */
    int has_total_size;
    uint64_t total_size;     /* the index's metadata.total_size */
    size_t nproblems;
    dt_insp_problem *problems;
    size_t nerrors;          /* problems that are not warnings */
    int64_t opset;           /* ONNX: the model's default-domain opset */
} dt_inspect;

/* Inspects path (kind by its name, or a folder). Fills r with everything that could be read,
 * even after errors (r must be freed in every case). Returns DTCAST_OK when no error was found
 * (warnings allowed); else the status of the first error, whose message is also in err.
 * Running out of memory stops it (r then holds what was done). progress (may be NULL) is called
 * after each file's header with the bytes of the files read so far and of all the files; its
 * nonzero return stops the inspection with a "cancelled" error (DTCAST_ERR_IO). */
dtcast_status dt_inspect_path(const char *path, dt_inspect *r, dt_progress_fn progress,
                              void *progress_ctx, dt_io_error *err);

/* The same for one file of `kind` (NPY, PB, SAFETENSORS, ONNX or GGUF) held in memory, shown as `name`
 * (the fuzz harness; external data of a .pb is not opened). */
dtcast_status dt_inspect_memory(const uint8_t *buf, size_t len, dt_insp_kind kind,
                                const char *name, dt_inspect *r, dt_io_error *err);

void dt_inspect_free(dt_inspect *r);

/* The JSON document of r (docs/files.md, "dtcast inspect", --json), malloc'd into *text (its
 * length in *len, NUL-terminated). Byte strings that are not UTF-8 (file names) carry each
 * stray byte as \udcXX, as Python's surrogateescape does. */
dtcast_status dt_inspect_json(const dt_inspect *r, char **text, size_t *len, dt_io_error *err);

/* A group's granularity: "tensor" (one scale), "channel" (one scale per row) or "block"; block
 * receives rows x columns of elements per scale (rows 1 unless the layout tiles rows). */
const char *dt_insp_granularity(const dt_qgroup *g, int64_t block[2]);

#endif /* DTCAST_FILES_INSPECT_H */
