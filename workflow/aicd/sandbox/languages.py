"""One table of how each of the nine languages is compiled and run inside the sandbox."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Toolchain:
    source: str                      # file name the program is written to
    compile: tuple[str, ...] | None  # argv, or None for interpreted languages
    run: tuple[str, ...]


TOOLCHAINS = {
    "Python": Toolchain("main.py", None, ("python3", "main.py")),
    "C": Toolchain("main.c", ("gcc", "-O2", "-std=c11", "-o", "main", "main.c", "-lm"), ("./main",)),
    "C++": Toolchain("main.cpp", ("g++", "-O2", "-std=c++17", "-o", "main", "main.cpp"), ("./main",)),
    "Java": Toolchain("Main.java", ("javac", "-J-Xmx256m", "-d", ".", "Main.java"), ("java", "-Xmx256m", "-Xss64m", "-cp", ".", "Main")),
    "Go": Toolchain("main.go", ("go", "build", "-o", "main", "main.go"), ("./main",)),
    "Rust": Toolchain("main.rs", ("rustc", "-O", "-o", "main", "main.rs"), ("./main",)),
    "PHP": Toolchain("main.php", None, ("php", "main.php")),
    "JavaScript": Toolchain("main.js", None, ("node", "main.js")),
    "C#": Toolchain("main.cs", ("mcs", "-out:main.exe", "main.cs"), ("mono", "main.exe")),
}

_JAVA_PUBLIC_CLASS = re.compile(r"public\s+(?:final\s+|abstract\s+)*class\s+(\w+)")
_JAVA_MAIN_CLASS = re.compile(r"class\s+(\w+)[^{]*\{(?:(?!\bclass\b).)*?static\s+void\s+main\s*\(", re.DOTALL)


def job_for(language: str, code: str) -> dict:
    """The files and commands that build and run `code` (Java's file and class names follow
    its public class, as javac requires)."""
    tool = TOOLCHAINS[language]
    if language != "Java":
        return {"files": {tool.source: code}, "compile": list(tool.compile) if tool.compile else None,
                "run": list(tool.run)}
    public = _JAVA_PUBLIC_CLASS.search(code)
    main = _JAVA_MAIN_CLASS.search(code)
    file_class = public.group(1) if public else "Main"
    run_class = main.group(1) if main else file_class
    return {"files": {f"{file_class}.java": code},
            "compile": ["javac", "-J-Xmx256m", "-d", ".", f"{file_class}.java"],
            "run": ["java", "-Xmx256m", "-Xss64m", "-cp", ".", run_class]}
