/* polyc's call launcher: a CPython extension that calls a kernel's uniform entry point
 *
 *     int polyc_<op>_launch(const int64_t *sizes, void *const *args)
 *
 * on numpy arrays, without Python code in between. One module serves every operator:
 * `Launcher(...)` is built once per compiled operator from its argument specification
 * (polyc/jit/launcher.py), and `launcher.call(args, out)` does what the Python binder
 * (polyc/jit/arguments.py) does for the common case: exact dtypes, ranks, C-contiguous
 * aligned arrays, sizes bound from the first dimension that names them, scalars that fit,
 * outputs allocated or `out=` arrays checked, gather indices scanned, the GIL released
 * around the kernel.
 *
 * Anything else (a wrong argument, a copy to make, a precondition that fails, memory
 * shared between arguments) is not handled here: the call goes to the Python binder,
 * which either raises the ArgumentError it always raised or makes the copies and runs the
 * kernel through ctypes. What depends on the sizes alone (preconditions, output shapes,
 * the gathers that run) comes from Python once per distinct sizes and is remembered for
 * the last sizes seen.
 *
 * torch CPU tensors take the same path once polyc's Python side has seen one (`use_torch`,
 * called with torch's objects: this file never includes torch): a plain, contiguous,
 * aligned tensor that needs no gradient becomes a numpy view of its memory for the call,
 * and fresh outputs are returned through `torch.from_numpy`. Any other tensor goes to
 * the binder (polyc/jit/torch_tensors.py), which says what to do with it.
 *
 * Built with the C compiler polyc uses, against this Python's and numpy's headers; cached
 * like kernels. Not for free-threaded Python: the sizes memo relies on the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if NPY_ABI_VERSION < 0x02000000 /* numpy 1.x headers */
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif

#define MAX_SIZES 64
#define MAX_ARGS 64
#define MAX_GATHERS 32
#define MAX_OUTPUT_DIMS 256

typedef int (*launch_function)(const int64_t *sizes, void *const *args);

typedef union {
    int8_t i8; int16_t i16; int32_t i32; int64_t i64;
    uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    float f32; double f64; _Bool b;
} scalar_value;

typedef struct {
    PyArray_Descr *descr; /* the declared dtype */
    int rank;             /* 0: a scalar, passed by value */
    char kind;            /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float */
    int itemsize;
    double float_max;     /* the largest finite value of a float type */
    int size_index[NPY_MAXDIMS]; /* the size this dimension binds or checks, -1: constant */
    int64_t constant[NPY_MAXDIMS];
} input_spec;

typedef struct {
    PyArray_Descr *descr;
    int rank;
    int starts_at_zero;   /* a fresh array accumulates from zero */
} output_spec;

typedef struct {
    int input;            /* the index tensor's position among the inputs */
    int64_t extent;       /* its values must lie in [0, extent) */
} gather_check;

typedef struct {
    PyObject_HEAD
    launch_function function;
    int n_sizes, n_inputs, n_outputs;
    input_spec inputs[MAX_ARGS];
    output_spec outputs[MAX_ARGS];
    PyObject *prepare;    /* sizes tuple -> (output shapes, gathers) or None */
    PyObject *fallback;   /* (args, out) -> the Python binder's call */
    PyObject *fail;       /* (status, args) -> raises the kernel's error */
    /* What `prepare` said for the last sizes it accepted. */
    int memo_valid;
    int64_t memo_sizes[MAX_SIZES];
    npy_intp memo_shapes[MAX_OUTPUT_DIMS];
    int memo_shape_count;
    int memo_gathers;
    gather_check gathers[MAX_GATHERS];
} Launcher;

/* One call's arguments, ready for the kernel. */
typedef struct {
    int64_t sizes[MAX_SIZES];
    void *args[2 * MAX_ARGS];
    scalar_value scalars[MAX_ARGS];
    PyObject *outputs[MAX_ARGS]; /* new references */
    int n_outputs;
    PyObject *views[2 * MAX_ARGS]; /* new references: numpy views of torch tensors */
    int n_views;
} prepared_call;

static void release_outputs(prepared_call *call)
{
    for (int k = 0; k < call->n_outputs; k++)
        Py_CLEAR(call->outputs[k]);
    call->n_outputs = 0;
}

static void release_views(prepared_call *call)
{
    for (int k = 0; k < call->n_views; k++)
        Py_CLEAR(call->views[k]);
    call->n_views = 0;
}

/* ------------------------------------------------------------------ scalars */

static int same_dtype(PyArray_Descr *given, PyArray_Descr *declared)
{
    return given == declared || PyArray_EquivTypes(given, declared);
}

/* Store the declared type's value of `number` (a double exact in double). */
static int store_float(const input_spec *spec, double number, scalar_value *value)
{
    if (isfinite(number) && fabs(number) > spec->float_max)
        return 0; /* too large: the binder says so */
    if (spec->itemsize == 8) {
        value->f64 = number;
        return 1;
    }
    if (spec->itemsize == 4) {
        value->f32 = (float)number;
        return 1;
    }
#ifdef __FLT16_MAX__
    value->f32 = (float)(_Float16)number; /* a half value, passed as float */
    return 1;
#else
    return 0;
#endif
}

static int store_integer(const input_spec *spec, long long number, scalar_value *value)
{
    if (spec->kind == 'u') {
        if (number < 0 || (spec->itemsize < 8 && number >> (8 * spec->itemsize)))
            return 0;
        switch (spec->itemsize) {
        case 1: value->u8 = (uint8_t)number; return 1;
        case 2: value->u16 = (uint16_t)number; return 1;
        case 4: value->u32 = (uint32_t)number; return 1;
        default: value->u64 = (uint64_t)number; return 1;
        }
    }
    long long limit = spec->itemsize == 8 ? INT64_MAX : (1LL << (8 * spec->itemsize - 1)) - 1;
    if (number > limit || number < -limit - 1)
        return 0;
    switch (spec->itemsize) {
    case 1: value->i8 = (int8_t)number; return 1;
    case 2: value->i16 = (int16_t)number; return 1;
    case 4: value->i32 = (int32_t)number; return 1;
    default: value->i64 = (int64_t)number; return 1;
    }
}

/* A value of exactly the declared dtype, as raw bytes (a numpy scalar or 0-d array). */
static int store_bytes(const input_spec *spec, const void *bytes, scalar_value *value)
{
    if (spec->kind == 'f' && spec->itemsize == 2) {
#ifdef __FLT16_MAX__
        _Float16 half;
        memcpy(&half, bytes, 2);
        value->f32 = (float)half;
        return 1;
#else
        return 0;
#endif
    }
    memcpy(value, bytes, spec->itemsize);
    return 1;
}

/* 1: stored; 0: not the common case (the binder decides). */
static int bind_scalar(const input_spec *spec, PyObject *object, scalar_value *value)
{
    if (PyArray_Check(object)) {
        PyArrayObject *array = (PyArrayObject *)object;
        if (PyArray_NDIM(array) != 0 || !same_dtype(PyArray_DESCR(array), spec->descr))
            return 0;
        return store_bytes(spec, PyArray_DATA(array), value);
    }
    if (PyArray_IsScalar(object, Generic)) {
        PyArray_Descr *descr = PyArray_DescrFromScalar(object);
        int same = descr != NULL && same_dtype(descr, spec->descr);
        Py_XDECREF(descr);
        if (!same)
            return 0;
        scalar_value raw;
        PyArray_ScalarAsCtype(object, &raw);
        return store_bytes(spec, &raw, value);
    }
    if (PyBool_Check(object)) {
        int truth = object == Py_True;
        if (spec->kind == 'f')
            return store_float(spec, truth, value);
        if (spec->kind == 'b') {
            value->b = truth;
            return 1;
        }
        return store_integer(spec, truth, value);
    }
    if (PyLong_Check(object)) {
        if (spec->kind == 'b')
            return 0;
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(object, &overflow);
        if (overflow || (number == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        if (spec->kind == 'f') {
            const long long exact = 1LL << 53; /* beyond: rounding twice, let numpy round */
            if (number > exact || number < -exact)
                return 0;
            return store_float(spec, (double)number, value);
        }
        return store_integer(spec, number, value);
    }
    if (PyFloat_Check(object)) {
        if (spec->kind != 'f')
            return 0;
        return store_float(spec, PyFloat_AS_DOUBLE(object), value);
    }
    return 0;
}

/* ------------------------------------------------------------------ sizes */

/* Make the memo hold what `prepare` says for `sizes`. 1: done; 0: fall back; -1: error. */
static int prepare_sizes(Launcher *self, const int64_t *sizes)
{
    if (self->memo_valid &&
        memcmp(self->memo_sizes, sizes, sizeof(int64_t) * self->n_sizes) == 0)
        return 1;
    PyObject *key = PyTuple_New(self->n_sizes);
    if (key == NULL)
        return -1;
    for (int k = 0; k < self->n_sizes; k++) {
        PyObject *size = PyLong_FromLongLong(sizes[k]);
        if (size == NULL) {
            Py_DECREF(key);
            return -1;
        }
        PyTuple_SET_ITEM(key, k, size);
    }
    PyObject *answer = PyObject_CallOneArg(self->prepare, key);
    Py_DECREF(key);
    if (answer == NULL)
        return -1;
    if (answer == Py_None) {
        Py_DECREF(answer);
        return 0;
    }
    /* (shapes, gathers): shapes a flat tuple of the outputs' extents in order;
       gathers a flat tuple (input, extent, input, extent, ...). */
    PyObject *shapes, *gathers;
    int result = -1;
    self->memo_valid = 0;
    if (!PyArg_ParseTuple(answer, "O!O!", &PyTuple_Type, &shapes, &PyTuple_Type, &gathers))
        goto done;
    Py_ssize_t n_shapes = PyTuple_GET_SIZE(shapes), n_gathers = PyTuple_GET_SIZE(gathers);
    if (n_shapes > MAX_OUTPUT_DIMS || n_gathers > 2 * MAX_GATHERS || n_gathers % 2) {
        result = 0; /* more than the memo holds: every call takes the binder */
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_shapes; k++) {
        self->memo_shapes[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shapes, k));
        if (self->memo_shapes[k] == -1 && PyErr_Occurred())
            goto done;
    }
    for (Py_ssize_t k = 0; k < n_gathers / 2; k++) {
        self->gathers[k].input = (int)PyLong_AsLong(PyTuple_GET_ITEM(gathers, 2 * k));
        self->gathers[k].extent = PyLong_AsLongLong(PyTuple_GET_ITEM(gathers, 2 * k + 1));
        if (PyErr_Occurred())
            goto done;
    }
    self->memo_shape_count = (int)n_shapes;
    self->memo_gathers = (int)(n_gathers / 2);
    memcpy(self->memo_sizes, sizes, sizeof(int64_t) * self->n_sizes);
    self->memo_valid = 1;
    result = 1;
done:
    Py_DECREF(answer);
    return result;
}

#define SCAN(type)                                                       \
    {                                                                    \
        const type *v = (const type *)data;                              \
        for (npy_intp k = 0; k < count; k++)                             \
            if ((int64_t)v[k] < 0 || (int64_t)v[k] >= extent)            \
                return 0;                                                \
        return 1;                                                        \
    }
#define SCAN_UNSIGNED(type)                                              \
    {                                                                    \
        const type *v = (const type *)data;                              \
        for (npy_intp k = 0; k < count; k++)                             \
            if ((uint64_t)v[k] >= (uint64_t)extent)                      \
                return 0;                                                \
        return 1;                                                        \
    }

/* 1: every index lies in [0, extent); 0: not (or a type this scan does not know). */
static int indices_in_range(PyArrayObject *array, int64_t extent)
{
    const void *data = PyArray_DATA(array);
    npy_intp count = PyArray_SIZE(array);
    if (count == 0)
        return 1;
    if (extent <= 0)
        return 0;
    PyArray_Descr *descr = PyArray_DESCR(array);
    int itemsize = (int)PyDataType_ELSIZE(descr);
    if (descr->kind == 'i') {
        switch (itemsize) {
        case 1: SCAN(int8_t)
        case 2: SCAN(int16_t)
        case 4: SCAN(int32_t)
        case 8: SCAN(int64_t)
        }
    } else if (descr->kind == 'u') {
        switch (itemsize) {
        case 1: SCAN_UNSIGNED(uint8_t)
        case 2: SCAN_UNSIGNED(uint16_t)
        case 4: SCAN_UNSIGNED(uint32_t)
        case 8: SCAN_UNSIGNED(uint64_t)
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ torch tensors */

/* torch's objects, from `use_torch` (NULL until then): exactly torch.Tensor (subclasses
   such as Parameter or fake tensors take the binder), torch.strided, a dict from torch
   dtypes to numpy dtypes, torch.from_numpy, and the attribute names read. */
static struct {
    PyTypeObject *tensor;
    PyObject *strided, *dtypes, *from_numpy;
    PyObject *layout, *is_cpu, *requires_grad, *dtype, *is_contiguous, *shape, *data_ptr;
} torch_api;

static int is_tensor(PyObject *object)
{
    return torch_api.tensor != NULL && Py_TYPE(object) == torch_api.tensor;
}

/* 1: `object`'s attribute `name` (or its method's result) is `expected`. */
static int attribute_is(PyObject *object, PyObject *name, int method, PyObject *expected)
{
    PyObject *value = method ? PyObject_CallMethodNoArgs(object, name)
                             : PyObject_GetAttr(object, name);
    Py_XDECREF(value);
    return value == expected;
}

/* A numpy view of a CPU tensor's memory with the declared dtype and rank, owned by
   `call`; NULL (nothing raised) where the binder must decide: another device, a
   gradient, another layout, dtype or rank, strides, misaligned or no memory. */
static PyArrayObject *tensor_view(prepared_call *call, PyObject *tensor, PyArray_Descr *descr,
                                  int rank)
{
    if (!is_tensor(tensor) || call->n_views == 2 * MAX_ARGS)
        return NULL;
    PyObject *value = NULL, *view = NULL;
    npy_intp dims[NPY_MAXDIMS];
    if (!attribute_is(tensor, torch_api.layout, 0, torch_api.strided) ||
        !attribute_is(tensor, torch_api.is_cpu, 0, Py_True) ||
        !attribute_is(tensor, torch_api.requires_grad, 0, Py_False) ||
        !attribute_is(tensor, torch_api.is_contiguous, 1, Py_True))
        goto done;
    value = PyObject_GetAttr(tensor, torch_api.dtype);
    PyObject *numpy_dtype = value ? PyDict_GetItemWithError(torch_api.dtypes, value) : NULL;
    if (numpy_dtype == NULL || !same_dtype((PyArray_Descr *)numpy_dtype, descr))
        goto done;
    Py_CLEAR(value);
    value = PyObject_GetAttr(tensor, torch_api.shape); /* a torch.Size: a tuple */
    if (value == NULL || !PyTuple_Check(value) || PyTuple_GET_SIZE(value) != rank)
        goto done;
    for (int d = 0; d < rank; d++)
        if ((dims[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(value, d))) < 0)
            goto done;
    Py_CLEAR(value);
    value = PyObject_CallMethodNoArgs(tensor, torch_api.data_ptr);
    void *data = value ? PyLong_AsVoidPtr(value) : NULL;
    if (data == NULL || (uintptr_t)data % PyDataType_ELSIZE(descr))
        goto done; /* an empty tensor may have no memory: the binder takes it */
    Py_INCREF(descr); /* stolen */
    view = PyArray_NewFromDescr(&PyArray_Type, descr, rank, dims, NULL, data,
                                NPY_ARRAY_CARRAY, NULL);
    if (view == NULL)
        goto done;
    Py_INCREF(tensor); /* stolen: the view keeps the tensor alive */
    if (PyArray_SetBaseObject((PyArrayObject *)view, tensor) < 0) {
        Py_CLEAR(view);
        goto done;
    }
    call->views[call->n_views++] = view;
done:
    Py_XDECREF(value);
    if (view == NULL)
        PyErr_Clear();
    return (PyArrayObject *)view;
}

/* Fresh outputs made torch tensors sharing their memory. Takes `result`'s reference. */
static PyObject *as_tensors(PyObject *result, int n_outputs)
{
    if (result == NULL || n_outputs == 1) {
        PyObject *tensor = result ? PyObject_CallOneArg(torch_api.from_numpy, result) : NULL;
        Py_XDECREF(result);
        return tensor;
    }
    for (int k = 0; k < n_outputs; k++) { /* a tuple only we hold */
        PyObject *tensor = PyObject_CallOneArg(torch_api.from_numpy,
                                               PyTuple_GET_ITEM(result, k));
        if (tensor == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        Py_SETREF(PyTuple_GET_ITEM(result, k), tensor);
    }
    return result;
}

/* use_torch(Tensor, strided, dtypes, from_numpy): calls take torch tensors from now on. */
static PyObject *use_torch(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
    (void)module;
    if (argc != 4 || !PyType_Check(argv[0]) || !PyDict_Check(argv[2])) {
        PyErr_SetString(PyExc_TypeError, "use_torch(Tensor, strided, dtypes, from_numpy)");
        return NULL;
    }
    if (torch_api.tensor != NULL)
        Py_RETURN_NONE;
    const char *names[] = {"layout", "is_cpu", "requires_grad", "dtype", "is_contiguous",
                           "shape", "data_ptr"};
    PyObject **slots[] = {&torch_api.layout, &torch_api.is_cpu, &torch_api.requires_grad,
                          &torch_api.dtype, &torch_api.is_contiguous, &torch_api.shape,
                          &torch_api.data_ptr};
    for (int k = 0; k < 7; k++)
        if ((*slots[k] = PyUnicode_InternFromString(names[k])) == NULL)
            return NULL;
    Py_INCREF(argv[1]);
    torch_api.strided = argv[1];
    Py_INCREF(argv[2]);
    torch_api.dtypes = argv[2];
    Py_INCREF(argv[3]);
    torch_api.from_numpy = argv[3];
    Py_INCREF(argv[0]);
    torch_api.tensor = (PyTypeObject *)argv[0]; /* last: the others are ready */
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ a call */

static int overlaps(PyArrayObject *a, PyArrayObject *b)
{
    char *a0 = PyArray_BYTES(a), *b0 = PyArray_BYTES(b);
    npy_intp na = PyArray_NBYTES(a), nb = PyArray_NBYTES(b);
    return na > 0 && nb > 0 && a0 < b0 + nb && b0 < a0 + na;
}

/* The array the kernel can take for `object` (a numpy array, or a view of a torch
   tensor owned by `call`), or NULL. */
static PyArrayObject *usable_array(prepared_call *call, PyObject *object, PyArray_Descr *descr,
                                   int rank)
{
    if (!PyArray_Check(object))
        return tensor_view(call, object, descr, rank);
    PyArrayObject *array = (PyArrayObject *)object;
    const int flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED;
    if (PyArray_NDIM(array) == rank && (PyArray_FLAGS(array) & flags) == flags &&
        same_dtype(PyArray_DESCR(array), descr))
        return array;
    return NULL;
}

/* The `out=` argument as the outputs' array objects (borrowed). 1: fits; 0: fall back. */
static int split_out(Launcher *self, PyObject *out, PyObject **arrays)
{
    if (PyArray_Check(out) || is_tensor(out)) {
        if (self->n_outputs != 1)
            return 0;
        arrays[0] = out;
        return 1;
    }
    if (!PyTuple_Check(out) && !PyList_Check(out))
        return 0;
    if (PySequence_Fast_GET_SIZE(out) != self->n_outputs)
        return 0;
    for (int k = 0; k < self->n_outputs; k++)
        arrays[k] = PySequence_Fast_GET_ITEM(out, k);
    return 1;
}

static int check_and_bind(Launcher *self, PyObject *args, PyObject *out, prepared_call *call);

/* Check `args` and `out`, bind the sizes, make the outputs. 1: ready (the views of torch
   tensors held until released); 0: fall back to the binder (nothing kept); -1: a Python
   error. */
static int prepare_call(Launcher *self, PyObject *args, PyObject *out, prepared_call *call)
{
    call->n_outputs = call->n_views = 0;
    int ready = check_and_bind(self, args, out, call);
    if (ready != 1)
        release_views(call);
    return ready;
}

static int check_and_bind(Launcher *self, PyObject *args, PyObject *out, prepared_call *call)
{
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != self->n_inputs)
        return 0;
    int bound[MAX_SIZES] = {0};
    PyArrayObject *inputs[MAX_ARGS]; /* of the tensor inputs */
    for (int k = 0; k < self->n_inputs; k++) {
        const input_spec *spec = &self->inputs[k];
        PyObject *value = PyTuple_GET_ITEM(args, k);
        if (spec->rank == 0) {
            if (!bind_scalar(spec, value, &call->scalars[k]))
                return 0;
            call->args[k] = &call->scalars[k];
            continue;
        }
        PyArrayObject *array = inputs[k] = usable_array(call, value, spec->descr, spec->rank);
        if (array == NULL)
            return 0;
        const npy_intp *shape = PyArray_DIMS(array);
        for (int d = 0; d < spec->rank; d++) {
            int size = spec->size_index[d];
            if (size < 0) {
                if (shape[d] != spec->constant[d])
                    return 0;
            } else if (!bound[size]) {
                call->sizes[size] = shape[d];
                bound[size] = 1;
            } else if (call->sizes[size] != shape[d]) {
                return 0;
            }
        }
        call->args[k] = PyArray_DATA(array);
    }
    int ready = prepare_sizes(self, call->sizes);
    if (ready != 1)
        return ready;
    for (int g = 0; g < self->memo_gathers; g++) {
        if (!indices_in_range(inputs[self->gathers[g].input], self->gathers[g].extent))
            return 0;
    }
    /* Ours: allocating an array may run Python code (the garbage collector) and with it
       another thread's call, which would move the memo to other sizes. */
    npy_intp shapes[MAX_OUTPUT_DIMS];
    memcpy(shapes, self->memo_shapes, sizeof(npy_intp) * self->memo_shape_count);
    const npy_intp *shape = shapes;
    if (out == NULL || out == Py_None) {
        for (int k = 0; k < self->n_outputs; k++) {
            const output_spec *spec = &self->outputs[k];
            Py_INCREF(spec->descr); /* stolen */
            PyObject *array = spec->starts_at_zero
                ? PyArray_Zeros(spec->rank, (npy_intp *)shape, spec->descr, 0)
                : PyArray_Empty(spec->rank, (npy_intp *)shape, spec->descr, 0);
            if (array == NULL) {
                release_outputs(call);
                return -1;
            }
            call->outputs[call->n_outputs++] = array;
            call->args[self->n_inputs + k] = PyArray_DATA((PyArrayObject *)array);
            shape += spec->rank;
        }
        return 1;
    }
    PyObject *given[MAX_ARGS];
    PyArrayObject *arrays[MAX_ARGS];
    if (!split_out(self, out, given))
        return 0;
    for (int k = 0; k < self->n_outputs; k++) {
        const output_spec *spec = &self->outputs[k];
        PyArrayObject *array = arrays[k] = usable_array(call, given[k], spec->descr, spec->rank);
        if (array == NULL)
            return 0;
        if (!PyArray_ISWRITEABLE(array) ||
            memcmp(PyArray_DIMS(array), shape, sizeof(npy_intp) * spec->rank) != 0)
            return 0;
        shape += spec->rank;
        for (int j = 0; j < k; j++)
            if (overlaps(array, arrays[j]))
                return 0;
        for (int j = 0; j < self->n_inputs; j++)
            if (self->inputs[j].rank && overlaps(array, inputs[j]))
                return 0; /* the binder copies the input (or says the outputs overlap) */
        call->args[self->n_inputs + k] = PyArray_DATA(array);
    }
    for (int k = 0; k < self->n_outputs; k++) {
        Py_INCREF(given[k]);
        call->outputs[call->n_outputs++] = given[k];
    }
    return 1;
}

/* The caller's result: the only output, or a tuple. Takes the call's references. */
static PyObject *results(prepared_call *call)
{
    if (call->n_outputs == 1) {
        call->n_outputs = 0;
        return call->outputs[0];
    }
    PyObject *tuple = PyTuple_New(call->n_outputs);
    if (tuple == NULL) {
        release_outputs(call);
        return NULL;
    }
    for (int k = 0; k < call->n_outputs; k++)
        PyTuple_SET_ITEM(tuple, k, call->outputs[k]);
    call->n_outputs = 0;
    return tuple;
}

static PyObject *kernel_failed(PyObject *fail, int status, PyObject *args)
{
    PyObject *raised = PyObject_CallFunction(fail, "iO", status, args);
    if (raised != NULL) {
        Py_DECREF(raised);
        PyErr_Format(PyExc_SystemError, "polyc: kernel status %d raised nothing", status);
    }
    return NULL;
}

static PyObject *Launcher_call(Launcher *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 2) {
        PyErr_SetString(PyExc_TypeError, "call(args, out)");
        return NULL;
    }
    prepared_call call;
    int ready = prepare_call(self, argv[0], argv[1], &call);
    if (ready < 0)
        return NULL;
    if (ready == 0)
        return PyObject_CallFunctionObjArgs(self->fallback, argv[0], argv[1], NULL);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = self->function(call.sizes, call.args);
    Py_END_ALLOW_THREADS
    if (status != 0) {
        release_outputs(&call);
        release_views(&call);
        return kernel_failed(self->fail, status, argv[0]);
    }
    int from_tensors = call.n_views > 0;
    release_views(&call);
    PyObject *result = results(&call);
    if (from_tensors && argv[1] == Py_None)
        return as_tensors(result, self->n_outputs);
    return result; /* the caller's out=, tensors or arrays */
}

/* ------------------------------------------------------------------ bound calls */

typedef struct {
    PyObject_HEAD
    launch_function function;
    PyObject *name;       /* for repr */
    PyObject *args;       /* keeps the inputs alive */
    PyObject *result;     /* what each call returns */
    PyObject *fail;
    int n_zeroed;
    void *zeroed[MAX_ARGS];
    npy_intp zeroed_bytes[MAX_ARGS];
    prepared_call call;
} BoundCall;

static PyTypeObject BoundCallType;

static PyObject *BoundCall_call(BoundCall *self, PyObject *args, PyObject *kwargs)
{
    if ((args && PyTuple_GET_SIZE(args)) || (kwargs && PyDict_GET_SIZE(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "a bound call takes no arguments");
        return NULL;
    }
    for (int k = 0; k < self->n_zeroed; k++)
        memset(self->zeroed[k], 0, self->zeroed_bytes[k]);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = self->function(self->call.sizes, self->call.args);
    Py_END_ALLOW_THREADS
    if (status != 0)
        return kernel_failed(self->fail, status, self->args);
    Py_INCREF(self->result);
    return self->result;
}

static void BoundCall_dealloc(BoundCall *self)
{
    Py_XDECREF(self->name);
    Py_XDECREF(self->args);
    Py_XDECREF(self->result);
    Py_XDECREF(self->fail);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *BoundCall_repr(BoundCall *self)
{
    return PyUnicode_FromFormat("<polyc bound call of %U>", self->name);
}

static PyTypeObject BoundCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_polyc_launcher.BoundCall",
    .tp_doc = "An operator's call with its arguments fixed (Operator.bind).",
    .tp_basicsize = sizeof(BoundCall),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_call = (ternaryfunc)BoundCall_call,
    .tp_dealloc = (destructor)BoundCall_dealloc,
    .tp_repr = (reprfunc)BoundCall_repr,
};

/* launcher.bind(args, out, name): a BoundCall, or None where the binder must bind. */
static PyObject *Launcher_bind(Launcher *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 3) {
        PyErr_SetString(PyExc_TypeError, "bind(args, out, name)");
        return NULL;
    }
    BoundCall *bound = PyObject_New(BoundCall, &BoundCallType);
    if (bound == NULL)
        return NULL;
    bound->name = bound->args = bound->result = bound->fail = NULL;
    int ready = prepare_call(self, argv[0], argv[1], &bound->call);
    if (ready == 1 && bound->call.n_views) { /* tensors: Operator.bind's own wrapper */
        release_outputs(&bound->call);
        release_views(&bound->call);
        ready = 0;
    }
    if (ready != 1) {
        Py_DECREF(bound);
        if (ready < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    bound->function = self->function;
    bound->n_zeroed = 0;
    if (argv[1] == Py_None) {
        for (int k = 0; k < self->n_outputs; k++) {
            if (!self->outputs[k].starts_at_zero)
                continue;
            PyArrayObject *array = (PyArrayObject *)bound->call.outputs[k];
            bound->zeroed[bound->n_zeroed] = PyArray_DATA(array);
            bound->zeroed_bytes[bound->n_zeroed++] = PyArray_NBYTES(array);
        }
    }
    Py_INCREF(argv[0]);
    bound->args = argv[0];
    Py_INCREF(argv[2]);
    bound->name = argv[2];
    Py_INCREF(self->fail);
    bound->fail = self->fail;
    bound->result = results(&bound->call);
    if (bound->result == NULL) {
        Py_DECREF(bound);
        return NULL;
    }
    return (PyObject *)bound;
}

/* ------------------------------------------------------------------ the Launcher type */

static int parse_input(PyObject *item, input_spec *spec, int n_sizes)
{
    /* (dtype, kind, float_max, dims): dims a tuple of (size index or -1, constant). */
    PyObject *dtype, *dims;
    const char *kind;
    if (!PyArg_ParseTuple(item, "OsdO!", &dtype, &kind, &spec->float_max, &PyTuple_Type, &dims))
        return -1;
    if (!PyArray_DescrCheck(dtype)) {
        PyErr_SetString(PyExc_TypeError, "an input's dtype must be a numpy dtype");
        return -1;
    }
    Py_INCREF(dtype);
    spec->descr = (PyArray_Descr *)dtype;
    spec->kind = kind[0];
    spec->itemsize = (int)PyDataType_ELSIZE(spec->descr);
    spec->rank = (int)PyTuple_GET_SIZE(dims);
    if (spec->rank > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "too many dimensions");
        return -1;
    }
    for (int d = 0; d < spec->rank; d++) {
        int size;
        long long constant;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(dims, d), "iL", &size, &constant))
            return -1;
        if (size >= n_sizes) {
            PyErr_SetString(PyExc_ValueError, "a dimension names a size that does not exist");
            return -1;
        }
        spec->size_index[d] = size;
        spec->constant[d] = constant;
    }
    return 0;
}

static PyObject *Launcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"function", "sizes", "inputs", "outputs", "prepare", "fallback",
                            "fail", NULL};
    unsigned long long address;
    int n_sizes;
    PyObject *inputs, *outputs, *prepare, *fallback, *fail;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KiO!O!OOO", names, &address, &n_sizes,
                                     &PyTuple_Type, &inputs, &PyTuple_Type, &outputs,
                                     &prepare, &fallback, &fail))
        return NULL;
    if (n_sizes < 0 || n_sizes > MAX_SIZES || PyTuple_GET_SIZE(inputs) > MAX_ARGS ||
        PyTuple_GET_SIZE(outputs) > MAX_ARGS || PyTuple_GET_SIZE(outputs) < 1) {
        PyErr_SetString(PyExc_ValueError, "more sizes or arguments than the launcher takes");
        return NULL;
    }
    Launcher *self = (Launcher *)type->tp_alloc(type, 0); /* zeroed */
    if (self == NULL)
        return NULL;
    self->function = (launch_function)(uintptr_t)address;
    self->n_sizes = n_sizes;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(inputs); k++) {
        if (parse_input(PyTuple_GET_ITEM(inputs, k), &self->inputs[k], n_sizes) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        self->n_inputs++;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(outputs); k++) {
        PyObject *dtype;
        output_spec *spec = &self->outputs[k];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(outputs, k), "Oip", &dtype, &spec->rank,
                              &spec->starts_at_zero) || !PyArray_DescrCheck(dtype)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "an output's dtype must be a numpy dtype");
            Py_DECREF(self);
            return NULL;
        }
        Py_INCREF(dtype);
        spec->descr = (PyArray_Descr *)dtype;
        self->n_outputs++;
    }
    Py_INCREF(prepare);
    self->prepare = prepare;
    Py_INCREF(fallback);
    self->fallback = fallback;
    Py_INCREF(fail);
    self->fail = fail;
    return (PyObject *)self;
}

static void Launcher_dealloc(Launcher *self)
{
    for (int k = 0; k < self->n_inputs; k++)
        Py_XDECREF(self->inputs[k].descr);
    for (int k = 0; k < self->n_outputs; k++)
        Py_XDECREF(self->outputs[k].descr);
    Py_XDECREF(self->prepare);
    Py_XDECREF(self->fallback);
    Py_XDECREF(self->fail);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Launcher_methods[] = {
    {"call", (PyCFunction)(void (*)(void))Launcher_call, METH_FASTCALL,
     "call(args, out): run the kernel on a call's arguments"},
    {"bind", (PyCFunction)(void (*)(void))Launcher_bind, METH_FASTCALL,
     "bind(args, out, name): a call with these arguments fixed, or None"},
    {NULL}};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_polyc_launcher.Launcher",
    .tp_doc = "Calls one compiled operator's uniform entry point on numpy arrays.",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Launcher_new,
    .tp_dealloc = (destructor)Launcher_dealloc,
    .tp_methods = Launcher_methods,
};

static PyMethodDef module_methods[] = {
    {"use_torch", (PyCFunction)(void (*)(void))use_torch, METH_FASTCALL,
     "use_torch(Tensor, strided, dtypes, from_numpy): calls take torch CPU tensors"},
    {NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_polyc_launcher", .m_doc = "polyc's C call launcher",
    .m_size = -1, .m_methods = module_methods};

PyMODINIT_FUNC PyInit__polyc_launcher(void)
{
    import_array();
    if (PyType_Ready(&LauncherType) < 0 || PyType_Ready(&BoundCallType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&LauncherType);
    if (PyModule_AddObject(m, "Launcher", (PyObject *)&LauncherType) < 0) {
        Py_DECREF(&LauncherType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
