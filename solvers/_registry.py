"""Registry of cone eigenvalue methods by name (a decorator, as in qpsolvers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from solvers.errors import UnknownMethodError

if TYPE_CHECKING:  # pragma: no cover
    from solvers.problem import ConeEigProblem
    from solvers.result import ConeEigResult

__all__ = ["Method", "register", "get_method", "available_methods"]


class Method(Protocol):
    """A method maps a problem and keyword options to a result."""

    def __call__(self, problem: "ConeEigProblem", **options: Any) -> "ConeEigResult": ...


_METHODS: dict[str, Method] = {}


def register(name: str) -> Callable[[Method], Method]:
    """Class the decorated function as the method ``name``."""

    def deco(fn: Method) -> Method:
        _METHODS[name] = fn
        return fn

    return deco


def available_methods() -> tuple[str, ...]:
    """Names of the registered methods, sorted."""
    return tuple(sorted(_METHODS))


def get_method(name: str) -> Method:
    """The method registered as ``name``; :class:`UnknownMethodError` lists the others."""
    try:
        return _METHODS[name]
    except (KeyError, TypeError):
        raise UnknownMethodError(
            f"unknown method {name!r}; available methods: {', '.join(available_methods())}"
        ) from None
