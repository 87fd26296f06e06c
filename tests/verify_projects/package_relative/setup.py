from setuptools import setup

setup(name="mypkg", packages=["mypkg"])
