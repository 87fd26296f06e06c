from jaxmigrate.cli import main

main(prog_name="jaxmigrate")
