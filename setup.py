"""Packaging: everything is read from settings.ini (nbdev's single source of project facts)."""
from configparser import ConfigParser
import shlex
import setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

requirements = shlex.split(cfg.get("requirements", ""))
dev_requirements = shlex.split(cfg.get("dev_requirements", ""))
bench_requirements = shlex.split(cfg.get("bench_requirements", ""))
gpu_requirements = shlex.split(cfg.get("gpu_requirements", ""))

setuptools.setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    license="Apache-2.0",
    python_requires=">=" + cfg["min_python"],
    packages=setuptools.find_namespace_packages(include=["ddrl_lab", "ddrl_lab.*"]),
    package_data={"ddrl_lab": ["configs/*.yaml"]},
    include_package_data=True,
    install_requires=requirements,
    extras_require={"dev": dev_requirements, "test": dev_requirements, "bench": bench_requirements,
                    "gpu": gpu_requirements},
    entry_points={"console_scripts": cfg.get("console_scripts", "").split()},
    zip_safe=False,
)
