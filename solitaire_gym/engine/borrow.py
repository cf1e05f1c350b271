"""Views that own nothing, for the hot loops of the env step and the solver.

A numba array carries a pointer to its owner's reference count (its meminfo), and so does the
state struct (``state.StateType``). Every call that passes one on counts it up on entry and down
on exit, and every read of a field of the struct counts that field, all with atomic instructions.
In the env step and the solver's search that bookkeeping cost about as much as the work itself.
So those loops run on views that own nothing:

* :func:`view`: an array made with ``numba.carray`` over the same memory, without a meminfo
  (counting it is a test of a null pointer);
* :func:`borrow` then :func:`fields`: for the state, a plain pointer (type :class:`Borrowed`) to
  the fields of a state struct made of such views. The engine's kernels read it exactly like a
  state (they only read its fields), so nothing is written twice.

A view is valid while its owner lives: the caller of the kernel holds the arrays, and the kernel
holds the struct that :func:`borrow` made for as long as it uses :func:`fields` of it.
"""

from __future__ import annotations

import numba as nb
from numba.core import cgutils, imputils, types
from numba.core.typing.templates import AttributeTemplate
from numba.extending import (
    infer_getattr,
    intrinsic,
    lower_getattr_generic,
    models,
    overload,
    register_model,
)

from solitaire_gym.engine.state import State


@intrinsic
def _data_ptr(typingctx, arr):
    """The address of an array's first element, typed as a pointer to its dtype."""
    sig = types.CPointer(arr.dtype)(arr)

    def codegen(context, builder, signature, args):
        return context.make_array(arr)(context, builder, value=args[0]).data

    return sig, codegen


def view(a):
    """A view of ``a`` that owns nothing, for compiled code; ``a`` itself when it is not a
    C-contiguous array (a strided view has no single block of memory to wrap: it stays counted,
    and correct)."""
    return a


@overload(view)
def _view(a):
    if isinstance(a, types.Array) and a.layout == "C":
        return lambda a: nb.carray(_data_ptr(a), a.shape)
    return lambda a: a


@nb.njit(cache=True)
def borrow(s):
    """A state struct over views of ``s``'s arrays that own nothing (:func:`view`)."""
    return State(
        view(s.tab),
        view(s.tab_len),
        view(s.tab_down),
        view(s.stock),
        view(s.stock_len),
        view(s.waste),
        view(s.waste_len),
        view(s.found),
        view(s.cells),
        view(s.score),
        view(s.moves),
        view(s.hist),
        view(s.hist_len),
        view(s.hist_top),
        view(s.tab_unknown),
        view(s.stock_unknown),
    )


class Borrowed(types.Type):
    """numba type: a plain pointer to the fields of a state struct (``StateType``), read like
    the struct itself but never reference-counted."""

    def __init__(self, struct_type: types.Type) -> None:
        self.struct_type = struct_type
        super().__init__(name=f"Borrowed({struct_type})")


@register_model(Borrowed)
class _BorrowedModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        payload = dmm.lookup(fe_type.struct_type.get_data_type()).get_value_type()
        super().__init__(dmm, fe_type, payload.as_pointer())


@infer_getattr
class _BorrowedAttribute(AttributeTemplate):
    key = Borrowed

    def generic_resolve(self, typ, attr):
        return typ.struct_type.field_dict.get(attr)


@lower_getattr_generic(Borrowed)
def _borrowed_getattr(context, builder, typ, val, attr):
    fields_ = cgutils.create_struct_proxy(typ.struct_type.get_data_type())(
        context, builder, ref=val
    )
    value = getattr(fields_, attr)
    return imputils.impl_ret_borrowed(context, builder, typ.struct_type.field_dict[attr], value)


@intrinsic
def fields(typingctx, st):
    """A :class:`Borrowed` pointer to the fields of the state struct ``st`` (which must outlive
    it: keep the struct :func:`borrow` returned in a variable while this is used)."""
    sig = Borrowed(st)(st)

    def codegen(context, builder, signature, args):
        meminfo = cgutils.create_struct_proxy(st)(context, builder, value=args[0]).meminfo
        data = context.nrt.meminfo_data(builder, meminfo)
        payload = context.data_model_manager[st.get_data_type()].get_value_type()
        return builder.bitcast(data, payload.as_pointer())

    return sig, codegen


@nb.njit(cache=True)
def hold(x) -> None:
    """Use ``x`` here: call it with the struct :func:`borrow` made after the last use of its
    :func:`fields`, so that the struct is not freed before (numba frees a value after its last
    use)."""
