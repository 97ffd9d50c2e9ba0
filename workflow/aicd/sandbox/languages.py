"""One table of how each of the nine languages is built, checked and run inside the sandbox,
and the job for one program.

What a program gets depends on what it is: with tests (stdin/expected pairs) and an entry
point it is built and run against them; with no tests, or with no entry point (a LeetCode-style
`class Solution`, a library function), it is only built — or, for Python, PHP and JavaScript,
syntax-checked — and reported as `compiled` or `compile_error`. Running a program that expects
input against an empty stdin says nothing about it."""

from __future__ import annotations

from dataclasses import dataclass

from ..codetools.treesitter import parse


@dataclass(frozen=True)
class Toolchain:
    source: str                      # file name the program is written to
    compile: tuple[str, ...] | None  # argv that builds a program with an entry point; None: interpreted
    check: tuple[str, ...]           # argv that builds (or syntax-checks) code that is not run
    run: tuple[str, ...]


TOOLCHAINS = {
    "Python": Toolchain("main.py", None, ("python3", "-m", "py_compile", "main.py"), ("python3", "main.py")),
    "C": Toolchain("main.c", ("gcc", "-O2", "-std=c11", "-o", "main", "main.c", "-lm"),
                   ("gcc", "-O2", "-std=c11", "-c", "-o", "main.o", "main.c"), ("./main",)),
    "C++": Toolchain("main.cpp", ("g++", "-O2", "-std=c++17", "-o", "main", "main.cpp"),
                     ("g++", "-O2", "-std=c++17", "-c", "-o", "main.o", "main.cpp"), ("./main",)),
    "Java": Toolchain("Main.java", ("javac", "-J-Xmx256m", "-d", ".", "Main.java"),
                      ("javac", "-J-Xmx256m", "-d", ".", "Main.java"),
                      ("java", "-Xmx256m", "-Xss64m", "-XX:-UsePerfData", "-cp", ".", "Main")),
    # `go build` of a non-main package compiles and discards (go vet would also fail on style findings)
    "Go": Toolchain("main.go", ("go", "build", "-o", "main", "main.go"), ("go", "build", "main.go"), ("./main",)),
    "Rust": Toolchain("main.rs", ("rustc", "-O", "-o", "main", "main.rs"),
                      ("rustc", "--crate-type", "lib", "--emit=metadata", "-o", "libmain.rmeta", "main.rs"), ("./main",)),
    "PHP": Toolchain("main.php", None, ("php", "-l", "main.php"), ("php", "main.php")),
    "JavaScript": Toolchain("main.js", None, ("node", "--check", "main.js"), ("node", "main.js")),
    "C#": Toolchain("main.cs", ("mcs", "-out:main.exe", "main.cs"), ("mcs", "-target:library", "-out:main.dll", "main.cs"),
                    ("mono", "main.exe")),
}
SCRIPTS = {"Python", "PHP", "JavaScript"}  # their entry point is the file itself


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


def _name(node) -> str:
    ident = node.child_by_field_name("name")
    return ident.text.decode("utf-8", "replace") if ident is not None else ""


def _modifiers(node) -> set[str]:
    return {m.text.decode() for c in node.children if c.type == "modifiers" for m in c.children} | \
           {c.text.decode() for c in node.children if c.type == "modifier"}


def _c_main(root) -> bool:
    for fn in root.children:
        if fn.type == "function_definition":
            decl = fn.child_by_field_name("declarator")
            while decl is not None and decl.type != "function_declarator":
                decl = decl.child_by_field_name("declarator")
            if decl is not None and (ident := decl.child_by_field_name("declarator")) is not None \
                    and ident.text == b"main":
                return True
    return False


def _go_main(root) -> bool:
    package = next((c for c in root.children if c.type == "package_clause"), None)
    is_main = package is not None and package.text.split()[-1] == b"main"
    return is_main and any(c.type == "function_declaration" and _name(c) == "main" for c in root.children)


def _rust_main(root) -> bool:
    return any(c.type == "function_item" and _name(c) == "main" for c in root.children)


def _csharp_main(root) -> bool:
    return any(n.type == "method_declaration" and _name(n) == "Main" and "static" in _modifiers(n) for n in _walk(root))


TYPE_DECLS = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration")


def java_layout(code: str) -> tuple[str, str | None]:
    """(file class, class to run or None). javac wants the file named after the public
    top-level type; `java` runs the top-level class whose body declares `static void main`
    (qualified by the package), wherever helper or nested classes come before it."""
    root = parse(code, "Java").root_node
    tops = [c for c in root.children if c.type in TYPE_DECLS]
    public = next((c for c in tops if "public" in _modifiers(c)), None)
    file_class = _name(public) if public is not None else "Main"
    package = next((c for c in root.children if c.type == "package_declaration"), None)
    prefix = ""
    if package is not None:
        names = [c for c in package.children if c.type in ("identifier", "scoped_identifier")]
        prefix = names[0].text.decode() + "." if names else ""
    for top in tops:
        for node in _walk(top):
            if node.type == "method_declaration" and _name(node) == "main" and "static" in _modifiers(node):
                return file_class, prefix + _name(top)
    return file_class, None


def has_entry_point(language: str, code: str) -> bool:
    if language in SCRIPTS:
        return True
    if language == "Java":
        return java_layout(code)[1] is not None
    root = parse(code, language).root_node
    return {"C": _c_main, "C++": _c_main, "Go": _go_main, "Rust": _rust_main, "C#": _csharp_main}[language](root)


def job_for(language: str, code: str, tests: list[dict] | None = None) -> dict:
    """Files and commands for one program: build and run it against its tests when it has
    tests and an entry point; otherwise only build or check it (`run` is None)."""
    tool = TOOLCHAINS[language]
    runnable = bool(tests) and has_entry_point(language, code)
    if language == "Java":
        file_class, run_class = java_layout(code)
        source = f"{file_class}.java"
        build = ["javac", "-J-Xmx256m", "-d", ".", source]
        run = list(tool.run[:-1]) + [run_class] if runnable else None
        return {"files": {source: code}, "compile": build, "run": run, "tests": tests or [],
                "entry_point": run_class is not None}
    if runnable:
        build = list(tool.compile) if tool.compile else None
        return {"files": {tool.source: code}, "compile": build, "run": list(tool.run), "tests": tests or [],
                "entry_point": True}
    entry = has_entry_point(language, code)
    if language == "Go" and not entry:
        code = _go_as_library(code)
    return {"files": {tool.source: code}, "compile": list(tool.check), "run": None, "tests": tests or [],
            "entry_point": entry}


def _go_as_library(code: str) -> str:
    """`package main` without `func main` cannot be built; the same code as another package
    can (same lines, so the compiler's messages still point at the right place)."""
    root = parse(code, "Go").root_node
    clause = next((c for c in root.children if c.type == "package_clause"), None)
    name = None if clause is None else next((c for c in clause.children if c.type == "package_identifier"), None)
    if name is None or name.text != b"main":
        return code
    raw = code.encode("utf-8")
    return (raw[:name.start_byte] + b"snippet" + raw[name.end_byte:]).decode("utf-8")
