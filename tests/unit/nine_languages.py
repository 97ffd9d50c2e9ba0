"""One small program in each of the nine languages, with comments, strings and loops:
the rewrite tests (codetools/test_perturb.py) and the feature tests that must be blind
to the rewrites (features/test_canonical.py, test_structure.py, test_stylometry_set.py) share
them. A helper module rather than a test module, so that tests in other folders import it by
name (tests/unit/conftest.py puts tests/unit on sys.path)."""

PROGRAMS = {
    "Python": 'import os\n\n\ndef total(values, scale=2):\n    """Sum.\n    # not a comment\n"""\n    acc = 0  # running\n'
              '    for v in values:\n        if v > 0:\n            acc += v * scale\n    text = f"{acc}"\n'
              '    return os.path.join(text, sep="/")\n',
    "Java": "public class Main {\n  // entry\n  static int count = 0;\n  public static void main(String[] args) {\n"
            "    int total = 0; /* sum */\n    for (int i = 0; i < args.length; i++) {\n      total += i;\n    }\n"
            "    String s = \"  { kept }\";\n    System.out.println(total + s);\n  }\n}\n",
    "C++": "#include <vector>\n// helper\nint add(int a, int b) {\n    int c = a + b;\n    return c;\n}\n"
           "int main() {\n    std::vector<int> xs = {1, 2};\n    for (int x : xs) { add(x, x); }\n    return 0;\n}\n",
    "C": "#include <stdio.h>\n/* entry\n   point */\nint main(void) {\n  int n = 3;\n  for (int i = 0; i < n; i++) {\n"
         "    printf(\"%d\\n\", i);\n  }\n  return 0;\n}\n",
    "Go": "package main\n\nimport \"fmt\"\n\n// main prints\nfunc main() {\n\ttotal := 0\n\tfor i := 0; i < 3; i++ {\n"
          "\t\ttotal += i\n\t}\n\tfmt.Println(total)\n}\n",
    "PHP": "<?php\n// sum\nfunction total($values) {\n    $acc = 0;\n    foreach ($values as $v) {\n        $acc += $v;\n"
           "    }\n    return $acc;\n}\necho total([1, 2]);\n",
    "C#": "using System;\nclass Program {\n    // entry\n    static void Main(string[] args) {\n        int total = 0;\n"
          "        foreach (var a in args) { total += a.Length; }\n        Console.WriteLine(total);\n    }\n}\n",
    "JavaScript": "// sum\nfunction total(values) {\n  let acc = 0;\n  for (const v of values) {\n    acc += v;\n  }\n"
                  "  return { acc };\n}\nconsole.log(total([1, 2]));\n",
    "Rust": "// entry\nfn main() {\n    let values = vec![1, 2, 3];\n    let mut total = 0;\n    for v in values.iter() {\n"
            "        total += v;\n    }\n    println!(\"{}\", total);\n}\n",
}
