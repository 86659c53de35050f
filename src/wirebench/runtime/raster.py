"""An SVG as a PNG, for the render tool: a vision model reads pictures, not SVG text.

Through the system's librsvg and cairo (Debian's librsvg2-2 and libcairo2, which chromium,
needed by the page tests, already pulls in), by ctypes: no Python package wraps them here,
and a browser per picture would cost a second. It runs where the caller runs: the
toolbox calls it inside the pair's confined child, since the SVG holds the agent's text.
"""

from __future__ import annotations

import ctypes
import functools
import re

# The longest side of the picture: what the vision APIs downscale to anyway (larger
# images cost tokens and show nothing more).
MAX_SIDE = 1568


class Unavailable(RuntimeError):
    pass


class _GError(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_uint32), ("code", ctypes.c_int),
                ("message", ctypes.c_char_p)]


class _Rect(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double),
                ("width", ctypes.c_double), ("height", ctypes.c_double)]


@functools.cache
def _libraries():
    try:
        rsvg = ctypes.CDLL("librsvg-2.so.2")
        cairo = ctypes.CDLL("libcairo.so.2")
        gobject = ctypes.CDLL("libgobject-2.0.so.0")
    except OSError as exc:
        raise Unavailable(f"no SVG rasterizer: {exc} (apt-get install librsvg2-2)") from exc
    err = ctypes.POINTER(ctypes.POINTER(_GError))
    vp = ctypes.c_void_p
    rsvg.rsvg_handle_new_from_data.restype = vp
    rsvg.rsvg_handle_new_from_data.argtypes = [ctypes.c_char_p, ctypes.c_size_t, err]
    rsvg.rsvg_handle_render_document.restype = ctypes.c_int
    rsvg.rsvg_handle_render_document.argtypes = [vp, vp, ctypes.POINTER(_Rect), err]
    cairo.cairo_image_surface_create.restype = vp
    cairo.cairo_image_surface_create.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    cairo.cairo_create.restype = vp
    cairo.cairo_create.argtypes = [vp]
    cairo.cairo_set_source_rgb.argtypes = [vp, ctypes.c_double, ctypes.c_double,
                                           ctypes.c_double]
    cairo.cairo_paint.argtypes = [vp]
    cairo.cairo_surface_write_to_png.restype = ctypes.c_int
    cairo.cairo_surface_write_to_png.argtypes = [vp, ctypes.c_char_p]
    cairo.cairo_destroy.argtypes = [vp]
    cairo.cairo_surface_destroy.argtypes = [vp]
    gobject.g_object_unref.argtypes = [vp]
    return rsvg, cairo, gobject


def size(svg: bytes, max_side: int = MAX_SIDE) -> tuple[int, int]:
    """The picture's pixel size: the SVG's viewBox (akcli's renders carry one, in mil
    units), scaled so the longer side is max_side."""
    head = svg[:4096].decode(errors="replace")
    m = re.search(r'viewBox="\s*[-\d.eE]+[\s,]+[-\d.eE]+[\s,]+([\d.eE]+)[\s,]+([\d.eE]+)', head)
    w, h = (float(m[1]), float(m[2])) if m else (4.0, 3.0)
    if w <= 0 or h <= 0:
        w, h = 4.0, 3.0
    scale = max_side / max(w, h)
    return max(1, round(w * scale)), max(1, round(h * scale))


def svg_to_png(svg: bytes, out: str, max_side: int = MAX_SIDE) -> tuple[int, int]:
    """Write `svg` as a PNG on white at `out`; its (width, height)."""
    rsvg, cairo, gobject = _libraries()
    error = ctypes.POINTER(_GError)()
    handle = rsvg.rsvg_handle_new_from_data(svg, len(svg), ctypes.byref(error))
    if not handle:
        why = error.contents.message.decode(errors="replace") if error else "unreadable"
        raise ValueError(f"the SVG does not parse: {why}")
    width, height = size(svg, max_side)
    surface = cairo.cairo_image_surface_create(1, width, height)  # CAIRO_FORMAT_RGB24
    context = cairo.cairo_create(surface)
    try:
        cairo.cairo_set_source_rgb(context, 1.0, 1.0, 1.0)
        cairo.cairo_paint(context)
        viewport = _Rect(0.0, 0.0, float(width), float(height))
        if not rsvg.rsvg_handle_render_document(handle, context, ctypes.byref(viewport),
                                                ctypes.byref(error)):
            raise ValueError("librsvg could not draw the SVG")
        if cairo.cairo_surface_write_to_png(surface, out.encode()) != 0:
            raise OSError(f"cairo could not write {out}")
    finally:
        cairo.cairo_destroy(context)
        cairo.cairo_surface_destroy(surface)
        gobject.g_object_unref(handle)
    return width, height
