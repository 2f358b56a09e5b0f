# Installs headers, libraries and an exported package so that an outside project can
#   find_package(Edgewise) and link edgewise::kernels / edgewise::gnn.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS edgewise_kernels edgewise_kernels_headers edgewise_data edgewise_gnn EXPORT EdgewiseTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY kernels/include/ gnn/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT EdgewiseTargets NAMESPACE edgewise:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Edgewise)

configure_package_config_file(cmake/EdgewiseConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/EdgewiseConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Edgewise)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/EdgewiseConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/EdgewiseConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/EdgewiseConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Edgewise)
