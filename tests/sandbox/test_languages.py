"""Every language compiles and runs in the sandbox, with stdin tests."""

import pytest

ECHO_SUM = {
    "Python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "C": "#include <stdio.h>\nint main(void){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a+b);return 0;}\n",
    "C++": "#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;}\n",
    "Java": "import java.util.*;\npublic class Solution {\n  public static void main(String[] x) {\n"
            "    Scanner s = new Scanner(System.in);\n    System.out.println(s.nextInt() + s.nextInt());\n  }\n}\n",
    "Go": "package main\nimport \"fmt\"\nfunc main() { var a, b int; fmt.Scan(&a, &b); fmt.Println(a + b) }\n",
    "Rust": "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut s).unwrap();"
            "let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();println!(\"{}\",v[0]+v[1]);}\n",
    "PHP": "<?php\n[$a, $b] = array_map('intval', explode(' ', trim(fgets(STDIN))));\necho $a + $b, \"\\n\";\n",
    "JavaScript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "C#": "using System;\nclass P { static void Main() { var p = Console.ReadLine().Split(' ');"
          " Console.WriteLine(int.Parse(p[0]) + int.Parse(p[1])); } }\n",
}
TESTS = [{"stdin": "2 3\n", "expected": "5"}, {"stdin": "10 -4\n", "expected": "6"}]


@pytest.mark.parametrize("language", sorted(ECHO_SUM))
def test_each_language_passes_its_tests(pool, language):
    result = pool.run_one(language, ECHO_SUM[language], TESTS)
    assert result["status"] == "ok", result
    assert [t["passed"] for t in result["tests"]] == [True, True]
    assert all(t["cpu_s"] >= 0 and t["max_rss_kb"] > 0 for t in result["tests"])


def test_wrong_answer_compile_error_and_runtime_error(pool):
    assert pool.run_one("Python", "print(42)\n", TESTS)["status"] == "wrong_answer"
    bad = pool.run_one("C++", "int main() { return x; }\n")
    assert bad["status"] == "compile_error" and "x" in bad["compile"]["stderr"]
    assert pool.run_one("Python", "raise SystemExit(3)\n")["status"] == "runtime_error"
    assert pool.run_one("Cobol", "DISPLAY 'HI'.")["status"] == "sandbox_error"
